import { createServer, type Server } from 'node:http'
import type { EventStore } from '@affiliate-webhooks/core'
import { affiliateWebhook } from '@affiliate-webhooks/node'
import { type ConversionsTable, conversionsTable } from './conversions.js'

export function createApp(
  secret: string,
  store?: EventStore,
): { server: Server; conversions: ConversionsTable } {
  const conversions = conversionsTable()
  const webhook = affiliateWebhook({
    path: '/hooks',
    secret,
    store,
    onConversion: (conversion) => conversions.upsert(conversion),
  })
  // Every other path falls through to the rest of the app.
  const server = createServer((req, res) =>
    webhook(req, res, () => {
      if (req.method === 'GET' && req.url === '/conversions') {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify(conversions.list()))
      } else {
        res.writeHead(404).end()
      }
    }),
  )
  return { server, conversions }
}

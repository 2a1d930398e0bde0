import type { EventStore } from '@affiliate-webhooks/core'
import { affiliateWebhook } from '@affiliate-webhooks/express'
import express from 'express'
import { type ConversionsTable, conversionsTable } from './conversions.js'

export function createApp(
  secret: string,
  store?: EventStore,
): { app: express.Express; conversions: ConversionsTable } {
  const conversions = conversionsTable()
  const app = express()
  // Before express.json(): the signature is over the exact bytes, which the JSON
  // parser would consume. (Or keep them with express.json({ verify: rawBodySaver }).)
  app.post(
    '/hooks',
    affiliateWebhook({
      secret,
      store,
      onConversion: (conversion) => conversions.upsert(conversion),
    }),
  )
  app.use(express.json())
  app.get('/conversions', (_req, res) => {
    res.json(conversions.list())
  })
  return { app, conversions }
}

import type { EventStore } from '@affiliate-webhooks/core'
import { affiliateWebhook } from '@affiliate-webhooks/fastify'
import Fastify, { type FastifyInstance } from 'fastify'
import { type ConversionsTable, conversionsTable } from './conversions.js'

export async function createApp(
  secret: string,
  store?: EventStore,
): Promise<{ app: FastifyInstance; conversions: ConversionsTable }> {
  const conversions = conversionsTable()
  const app = Fastify({ logger: process.env.NODE_ENV !== 'test' })
  // Its own encapsulated context with a buffer body parser: the app's JSON parsing is untouched.
  await app.register(affiliateWebhook, {
    path: '/hooks',
    secret,
    store,
    onConversion: (conversion) => conversions.upsert(conversion),
  })
  app.get('/conversions', async () => conversions.list())
  return { app, conversions }
}

/**
 * A node:http receiver with the Postgres store, whose handler writes with Drizzle
 * on `ctx.tx`: the ledger row and the store's handled mark commit in one
 * transaction. It sends itself three deliveries and prints the ledger:
 *   a new event -> 200 processed, one row;
 *   the same event again -> 200 duplicate, no second row;
 *   an event whose handler throws after its insert -> 500, its row rolled back.
 *
 * DATABASE_URL names the database (default: the local server's `postgres`).
 */
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import { affiliateWebhook } from '@affiliate-webhooks/node'
import { postgresStore } from '@affiliate-webhooks/postgres'
import { asc } from 'drizzle-orm'
import { drizzle } from 'drizzle-orm/node-postgres'
import pg from 'pg'
import { ledger } from './schema.js'

const secret = process.env.AFFILIATE_WEBHOOK_SECRET || 'whsec_example_drizzle_secret'
const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
})
await pool.query(`CREATE TABLE IF NOT EXISTS example_ledger (
  event_id text PRIMARY KEY, conversion_id bigint NOT NULL, status text NOT NULL,
  commission numeric(12, 2) NOT NULL, currency text NOT NULL,
  credited_at timestamptz NOT NULL DEFAULT now())`)

const store = postgresStore({ pool })
// Fails here, naming the database, if it cannot be reached: better than on the first delivery.
await store.ready()

const server = createServer(
  affiliateWebhook({
    secret,
    store,
    logger: false,
    async onConversion(conversion, event, ctx) {
      // Drizzle on the store's transaction: this row commits with the handled mark, or not at all.
      const db = drizzle(ctx.tx)
      await db.insert(ledger).values({
        eventId: event.id,
        conversionId: conversion.id,
        status: conversion.status,
        // Null while the network has not priced the conversion yet (the spec's nullable fields).
        commission: conversion.commission ?? '0.00',
        currency: conversion.currency ?? 'EUR',
      })
      if (Number(conversion.commission) < 0) throw new Error('negative commission: refused')
    },
  }),
)
server.listen(0, '127.0.0.1')
await once(server, 'listening')
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`

async function send(label: string, event: object) {
  const { headers, body } = await signedDelivery({ secret, event })
  const response = await fetch(url, { method: 'POST', headers, body })
  console.log(`--- ${label}: ${response.status} ${await response.text()}`)
}

const credited = buildConversionEvent({ conversion: { id: 8101, commission: '12.50' } })
await send('a new event', credited)
await send('the same event again', credited)
await send(
  'a handler that throws after its insert',
  buildConversionEvent({ conversion: { id: 8102, commission: '-1.00' } }),
)

const rows = await drizzle(pool).select().from(ledger).orderBy(asc(ledger.creditedAt))
console.log(`--- ledger: ${rows.length} row(s)`)
for (const row of rows)
  console.log(`${row.eventId} conversion ${row.conversionId} ${row.commission} ${row.currency}`)
server.close()
await pool.end()

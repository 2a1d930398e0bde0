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
import { affiliateWebhook } from '@affiliate-webhooks/node'
import { postgresStore } from '@affiliate-webhooks/postgres'
import { asc } from 'drizzle-orm'
import { drizzle } from 'drizzle-orm/node-postgres'
import pg from 'pg'
import { databaseUrl, LEDGER_DDL, secret, sendThree } from './deliveries.js'
import { ledger } from './schema.js'

const pool = new pg.Pool({ connectionString: databaseUrl })
await pool.query(LEDGER_DDL)

const store = postgresStore({ pool })
// Fails here, naming the database, if it cannot be reached: better than on the first delivery.
await store.ready()

await sendThree(
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

const rows = await drizzle(pool).select().from(ledger).orderBy(asc(ledger.creditedAt))
console.log(`--- ledger: ${rows.length} row(s)`)
for (const row of rows)
  console.log(`${row.eventId} conversion ${row.conversionId} ${row.commission} ${row.currency}`)
await pool.end()

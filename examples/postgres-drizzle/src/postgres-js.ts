/**
 * The Drizzle recipe on postgres.js: `postgresStore({ sql })` runs each delivery
 * in a transaction on a connection it reserves, and `drizzle(ctx.tx)` writes in
 * that transaction, so the ledger row commits with the handled mark or not at all.
 *
 * DATABASE_URL names the database (default: the local server's `postgres`).
 */
import { affiliateWebhook } from '@affiliate-webhooks/node'
import { postgresStore } from '@affiliate-webhooks/postgres'
import { drizzle } from 'drizzle-orm/postgres-js'
import postgres from 'postgres'
import { databaseUrl, LEDGER_DDL, secret, sendThree } from './deliveries.js'
import { ledger } from './schema.js'

const sql = postgres(databaseUrl, { onnotice: () => {} })
await sql.unsafe(LEDGER_DDL)
const store = postgresStore({ sql })
await store.ready()

await sendThree(
  affiliateWebhook({
    secret,
    store,
    logger: false,
    async onConversion(conversion, event, ctx) {
      // Drizzle on the delivery's transaction (a transaction's tagged template; the
      // store gives it the instance's options, which Drizzle reads: hence the cast).
      await drizzle(ctx.tx as unknown as postgres.Sql)
        .insert(ledger)
        .values({
          eventId: event.id,
          conversionId: conversion.id,
          status: conversion.status,
          commission: conversion.commission ?? '0.00',
          currency: conversion.currency ?? 'EUR',
        })
      if (Number(conversion.commission) < 0) throw new Error('negative commission: refused')
    },
  }),
)
const rows = await drizzle(sql).select().from(ledger)
console.log(`--- ledger: ${rows.length} row(s)`)
await sql.end()

/**
 * The Kysely recipe on pg: Kysely wants a pool, so each delivery gives it one
 * that hands out `ctx.tx` (the store's client, inside the delivery's
 * transaction) and never releases it: the store commits or rolls back, and
 * gives the client back, itself.
 *
 * DATABASE_URL names the database (default: the local server's `postgres`).
 */
import { affiliateWebhook } from '@affiliate-webhooks/node'
import { postgresStore } from '@affiliate-webhooks/postgres'
import { type Generated, Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import { databaseUrl, LEDGER_DDL, secret, sendThree } from './deliveries.js'

interface Database {
  example_ledger: {
    event_id: string
    conversion_id: number
    status: string
    commission: string
    currency: string
    credited_at: Generated<Date>
  }
}

/** Kysely on the delivery's transaction: its one connection is ctx.tx, never released by Kysely. */
const kyselyOn = (tx: pg.PoolClient) =>
  new Kysely<Database>({
    dialect: new PostgresDialect({
      pool: {
        connect: async () => ({ query: tx.query.bind(tx), release: () => {} }),
        end: async () => {},
      } as unknown as pg.Pool,
    }),
  })

const pool = new pg.Pool({ connectionString: databaseUrl })
await pool.query(LEDGER_DDL)
const store = postgresStore({ pool })
await store.ready()

await sendThree(
  affiliateWebhook({
    secret,
    store,
    logger: false,
    async onConversion(conversion, event, ctx) {
      await kyselyOn(ctx.tx)
        .insertInto('example_ledger')
        .values({
          event_id: event.id,
          conversion_id: conversion.id,
          status: conversion.status,
          commission: conversion.commission ?? '0.00',
          currency: conversion.currency ?? 'EUR',
        })
        .execute()
      if (Number(conversion.commission) < 0) throw new Error('negative commission: refused')
    },
  }),
)
const rows = await new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
  .selectFrom('example_ledger')
  .selectAll()
  .execute()
console.log(`--- ledger: ${rows.length} row(s)`)
await pool.end()

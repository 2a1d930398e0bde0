/**
 * The Prisma store on PostgreSQL (`prismaStore({ prisma })`, @prisma/adapter-pg):
 * the shared store contract, the one-row-per-conversion cases and the receiver
 * cases, as on node-postgres, with ctx.tx the interactive transaction's client.
 * The client is generated from test/sql/prisma/postgresql.prisma at test time.
 */
import { randomUUID } from 'node:crypto'
import { createReceiver } from '@affiliate-webhooks/core'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import { type PrismaRawQueries, prismaStore } from '@affiliate-webhooks/prisma'
import { PrismaPg } from '@prisma/adapter-pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { storeContract } from '../stores/store-contract.js'
import { createPostgresTestDatabase, type TestDatabase } from '../support/postgres-db.js'
import { type PrismaClientFor, prismaClientPath } from './prisma-clients.js'
import { sqlReceiverCases } from './sql-receiver-cases.js'
import { sqlStoreCases } from './sql-store-cases.js'

// The generated client exists only once a test generated it: typed here by what the tests call.
type Tx = PrismaRawQueries
type Client = PrismaClientFor<Tx>

const toDollars = (sql: string) => {
  let n = 0
  return sql.replace(/\?/g, () => `$${++n}`)
}

let db: TestDatabase
let prisma: Client
let PrismaClient: new (options: { adapter: PrismaPg }) => Client
beforeAll(async () => {
  ;({ PrismaClient } = await import(await prismaClientPath('postgresql')))
  db = await createPostgresTestDatabase()
  // Room for the claims the cases hold open, each on a connection of its own.
  prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: db.url, max: 30 }) })
})
afterAll(async () => {
  await prisma.$disconnect()
  await db.drop()
})

const prefixFor = (prefix: string | undefined) =>
  prefix === undefined
    ? 'aw_'
    : `aw_${prefix
        .replace(/[^a-z0-9]/gi, '')
        .toLowerCase()
        .slice(-8)}_`

storeContract('prismaStore (PostgreSQL)', ({ prefix, ...timings }) =>
  prismaStore({ prisma, tablePrefix: prefixFor(prefix), ...timings }),
)

sqlStoreCases('prismaStore (PostgreSQL)', async (options) => prismaStore({ prisma, ...options }))

sqlReceiverCases<Tx>('prismaStore (PostgreSQL)', {
  store: (options) => prismaStore({ prisma, ...options }),
  query: (tx, text, params = []) => tx.$executeRawUnsafe(text, ...params),
  exec: async (text, params = []) => {
    await db.pool.query(toDollars(text), params)
  },
  count: async (text, params = []) =>
    Number((await db.pool.query(toDollars(text), params)).rows[0]?.n),
  ledgerDdl: (table) =>
    `CREATE TABLE ${table} (event_id text PRIMARY KEY, conversion_id bigint, commission numeric)`,
  insertSql: (table) => `INSERT INTO ${table} VALUES ($1, $2, $3::numeric)`,
  spoil: {
    title: 'caught a failed statement (the transaction is aborted)',
    run: async (tx) => {
      await tx.$queryRawUnsafe('SELECT no_such_column FROM pg_class').catch(() => {})
    },
    status: 500,
    code: 'handler_failed',
  },
})

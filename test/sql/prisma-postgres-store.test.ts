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

describe('prismaStore (PostgreSQL): the client itself', () => {
  it('refuses what is not a Prisma client, and a provider it does not run on, naming the fix', () => {
    expect(() => prismaStore({ prisma: {} as Client })).toThrow(
      /Prisma 7 client on a driver adapter/,
    )
    // What a client generated for SQLite says of itself.
    const sqlite = {
      _activeProvider: 'sqlite',
      $transaction: () => Promise.resolve(),
      $queryRawUnsafe: () => Promise.resolve([]),
      $executeRawUnsafe: () => Promise.resolve(0),
    }
    expect(() => prismaStore({ prisma: sqlite as unknown as Client })).toThrow(
      /provider is "sqlite".*"postgresql".*"mysql"/,
    )
  })

  it('checks tablePrefix and schema when made, before loading the Postgres store', () => {
    expect(() => prismaStore({ prisma, tablePrefix: 'Bad-Prefix' })).toThrow(
      'prismaStore: `tablePrefix` must be lower-case letters, digits and _ (at most 40), starting with a letter or _; got "Bad-Prefix"',
    )
    expect(() => prismaStore({ prisma, schema: '1st' })).toThrow(
      'prismaStore: `schema` must be lower-case letters, digits and _ (at most 40), starting with a letter or _; got "1st"',
    )
  })

  it("writes through ctx.tx's generated models, with the mark; a redelivery is a duplicate", async () => {
    await db.pool.query(
      'CREATE TABLE IF NOT EXISTS effects (id bigserial PRIMARY KEY, event_id text NOT NULL, conversion_id bigint NOT NULL, event_order bigint NOT NULL, pid integer NOT NULL)',
    )
    const secret = 'whsec_prisma_models'
    const receiver = createReceiver({
      secret,
      store: prismaStore({ prisma }),
      async onConversion(conversion, event, ctx) {
        const tx = ctx.tx as unknown as {
          effect: { create(args: { data: Record<string, unknown> }): Promise<unknown> }
        }
        await tx.effect.create({
          data: {
            eventId: event.id,
            conversionId: BigInt(conversion.id),
            eventOrder: 1n,
            pid: process.pid,
          },
        })
      },
    })
    const event = buildConversionEvent({ conversion: { id: 6161 } })
    const signed = await signedDelivery({ secret, event })
    const input = { headers: signed.headers, rawBody: new TextEncoder().encode(signed.body) }
    expect((await receiver.receive(input)).outcome).toBe('processed')
    expect((await receiver.receive(input)).outcome).toBe('duplicate')
    const { rows } = await db.pool.query(
      'SELECT count(*)::int AS n FROM effects WHERE event_id = $1',
      [event.id],
    )
    expect(rows[0]).toEqual({ n: 1 })
  })

  it('refuses a ROLLBACK on ctx.tx before it is sent: the claim keeps its transaction and commits', async () => {
    const store = prismaStore({ prisma })
    const eventId = `evt_ended_${randomUUID().slice(0, 8)}`
    const begun = await store.begin({ eventId, conversionId: 4200, order: 10 })
    if (begun.status !== 'claimed') throw new Error(`expected claimed, got ${begun.status}`)
    await expect((begun.claim.tx as Tx).$executeRawUnsafe('ROLLBACK')).rejects.toMatchObject({
      code: 'ERR_AW_TX_CONTROL',
    })
    expect(await store.commit(begun.claim)).toBe(true)
    expect(await store.peek({ eventId, conversionId: 4200, order: 10 })).toBe('duplicate')
  })

  it('fails begin within acquireTimeoutMs (maxWait), not a hang, when every connection holds a claim', async () => {
    const small = new PrismaClient({ adapter: new PrismaPg({ connectionString: db.url, max: 2 }) })
    try {
      const store = prismaStore({ prisma: small, acquireTimeoutMs: 300, logger: false })
      await store.ready()
      const held = [
        await store.begin({ eventId: `evt_busy_${randomUUID()}`, order: 1 }),
        await store.begin({ eventId: `evt_busy_${randomUUID()}`, order: 1 }),
      ]
      const started = performance.now()
      await expect(store.begin({ eventId: `evt_busy_${randomUUID()}`, order: 1 })).rejects.toThrow(
        /prismaStore: cannot use the PostgreSQL database of the Prisma client \(P2028/,
      )
      expect(performance.now() - started).toBeLessThan(2000)
      for (const begun of held) if (begun.status === 'claimed') await store.release(begun.claim)
    } finally {
      await small.$disconnect()
    }
  })
})

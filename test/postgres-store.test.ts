import { randomUUID } from 'node:crypto'
import { createReceiver } from '@affiliate-webhooks/core'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import { postgresSchema, postgresStore } from '@affiliate-webhooks/postgres'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPostgresTestDatabase, type TestDatabase } from './postgres-db.js'
import { storeContract } from './store-contract.js'

let db: TestDatabase
beforeAll(async () => {
  db = await createPostgresTestDatabase()
})
afterAll(async () => {
  await db.drop()
})

const prefixFor = (prefix: string | undefined) =>
  prefix === undefined
    ? 'aw_'
    : `aw_${prefix
        .replace(/[^a-z0-9]/gi, '')
        .toLowerCase()
        .slice(-8)}_`

storeContract('postgresStore', ({ prefix, ...timings }) =>
  postgresStore({ pool: db.pool, tablePrefix: prefixFor(prefix), logger: false, ...timings }),
)

const SECRET = 'whsec_postgres_store_test'

async function delivery(event: object) {
  const signed = await signedDelivery({ secret: SECRET, event })
  return { headers: signed.headers, rawBody: new TextEncoder().encode(signed.body) }
}

describe('postgresStore with a receiver: effects through ctx.tx', () => {
  const table = `ledger_${randomUUID().slice(0, 8)}`
  beforeAll(async () => {
    await db.pool.query(
      `CREATE TABLE ${table} (event_id text PRIMARY KEY, conversion_id bigint, commission numeric)`,
    )
  })
  const effects = async (eventId: string) =>
    (await db.pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE event_id = $1`, [eventId]))
      .rows[0].n as number

  it('commits the handler writes with the handled mark; a redelivery is a duplicate', async () => {
    const store = postgresStore({ pool: db.pool, logger: false })
    const receiver = createReceiver({
      secret: SECRET,
      store,
      async onConversion(conversion, event, ctx) {
        await ctx.tx.query(`INSERT INTO ${table} VALUES ($1, $2, $3)`, [
          event.id,
          conversion.id,
          conversion.commission,
        ])
      },
    })
    const event = buildConversionEvent({ conversion: { id: 71, commission: '4.20' } })
    expect((await receiver.receive(await delivery(event))).outcome).toBe('processed')
    expect((await receiver.receive(await delivery(event))).outcome).toBe('duplicate')
    expect(await effects(event.id)).toBe(1)
  })

  it('rolls back the writes of a handler that throws (500), and its retry leaves one row', async () => {
    let fail = true
    const receiver = createReceiver({
      secret: SECRET,
      logger: false,
      store: postgresStore({ pool: db.pool, logger: false }),
      async onConversion(conversion, event, ctx) {
        await ctx.tx.query(`INSERT INTO ${table} VALUES ($1, $2, $3)`, [
          event.id,
          conversion.id,
          conversion.commission,
        ])
        if (fail) throw new Error('downstream failed after the insert')
      },
    })
    const event = buildConversionEvent({ conversion: { id: 72 } })
    const first = await receiver.receive(await delivery(event))
    expect(first.status).toBe(500)
    expect(await effects(event.id)).toBe(0)
    fail = false
    expect((await receiver.receive(await delivery(event))).outcome).toBe('processed')
    expect(await effects(event.id)).toBe(1)
  })

  it('never answers 2xx when the handler caught a failed statement (the transaction is aborted)', async () => {
    const receiver = createReceiver({
      secret: SECRET,
      logger: false,
      store: postgresStore({ pool: db.pool, logger: false }),
      async onConversion(_conversion, event, ctx) {
        await ctx.tx.query(`INSERT INTO ${table} VALUES ($1, 1, 1)`, [event.id])
        await ctx.tx.query('SELECT no_such_column FROM pg_class').catch(() => {})
      },
    })
    const event = buildConversionEvent({ conversion: { id: 73 } })
    const answer = await receiver.receive(await delivery(event))
    expect(answer.status).toBe(503)
    expect(await effects(event.id)).toBe(0)
  })

  it('answers a second delivery of an event whose transaction is open 409 at once, not after a wait', async () => {
    let entered!: () => void
    const inHandler = new Promise<void>((resolve) => {
      entered = resolve
    })
    let finish!: () => void
    const held = new Promise<void>((resolve) => {
      finish = resolve
    })
    const receiver = createReceiver({
      secret: SECRET,
      logger: false,
      store: postgresStore({ pool: db.pool, logger: false, lockWaitMs: 5000 }),
      async onConversion() {
        entered()
        await held
      },
    })
    const event = buildConversionEvent({ conversion: { id: 74 } })
    const first = receiver.receive(await delivery(event))
    await inHandler
    const started = performance.now()
    const second = await receiver.receive(await delivery(event))
    const waited = performance.now() - started
    expect(second.status).toBe(409)
    // lockWaitMs is 5 s: an answer well before it did not wait on the event.
    expect(waited).toBeLessThan(2500)
    finish()
    expect((await first).outcome).toBe('processed')
  })

  it('ends a hung handler transaction at the lease: its locks go, the retry runs, the late commit is not acknowledged', async () => {
    let release!: () => void
    const hang = new Promise<void>((resolve) => {
      release = resolve
    })
    let calls = 0
    const receiver = createReceiver({
      secret: SECRET,
      logger: false,
      leaseMs: 300,
      store: postgresStore({ pool: db.pool, logger: false }),
      async onConversion(conversion, event, ctx) {
        calls++
        await ctx.tx.query(`INSERT INTO ${table} VALUES ($1, $2, 1)`, [event.id, conversion.id])
        if (calls === 1) await hang
      },
    })
    const event = buildConversionEvent({ conversion: { id: 75 } })
    const hung = receiver.receive(await delivery(event))
    await new Promise((resolve) => setTimeout(resolve, 700))
    expect((await receiver.receive(await delivery(event))).outcome).toBe('processed')
    release()
    expect((await hung).status).toBe(503)
    expect(await effects(event.id)).toBe(1)
  })
})

describe('postgresStore tables', () => {
  it('creates its tables once when several stores start together', async () => {
    const tablePrefix = `aw_race_${randomUUID().slice(0, 6)}_`
    const stores = Array.from({ length: 6 }, () =>
      postgresStore({ pool: db.pool, tablePrefix, logger: false }),
    )
    await Promise.all(stores.map((store) => store.ready()))
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM ${tablePrefix}schema`)
    expect(rows[0].n).toBe(1)
  })

  it('refuses tables of another layout version with an error that says what to do', async () => {
    const tablePrefix = `aw_old_${randomUUID().slice(0, 6)}_`
    await db.pool.query(`CREATE TABLE ${tablePrefix}schema (version integer NOT NULL)`)
    await db.pool.query(`INSERT INTO ${tablePrefix}schema VALUES (0)`)
    const store = postgresStore({ pool: db.pool, tablePrefix, logger: false })
    await expect(store.ready()).rejects.toThrow(/version 0.*needs 1.*sql schema --postgres/s)
    await expect(store.begin({ eventId: 'evt_old', order: 1 })).rejects.toThrow(/version 0/)
  })

  it('prints the DDL it runs, and that DDL makes tables the store accepts', async () => {
    const tablePrefix = `aw_ddl_${randomUUID().slice(0, 6)}_`
    const ddl = postgresSchema({ tablePrefix })
    expect(ddl).toContain(`CREATE TABLE IF NOT EXISTS ${tablePrefix}events`)
    await db.pool.query(ddl)
    await db.pool.query(ddl)
    const store = postgresStore({ pool: db.pool, tablePrefix, logger: false })
    await store.ready()
    const begun = await store.begin({ eventId: 'evt_ddl', order: 1 })
    expect(begun.status).toBe('claimed')
    if (begun.status === 'claimed') expect(await store.commit(begun.claim)).toBe(true)
  })

  it('prunes expired marks and watermarks', async () => {
    const tablePrefix = `aw_prune_${randomUUID().slice(0, 6)}_`
    const store = postgresStore({
      pool: db.pool,
      tablePrefix,
      dedupeTtl: 50,
      orderingTtl: 50,
      logger: false,
    })
    for (let i = 0; i < 3; i++) {
      const begun = await store.begin({ eventId: `evt_p${i}`, conversionId: i, order: 10 })
      if (begun.status === 'claimed') await store.commit(begun.claim)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(await store.prune()).toBe(6)
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM ${tablePrefix}events`)
    expect(rows[0].n).toBe(0)
  })

  it('names the database and the setting, never the password, when the pool cannot connect', async () => {
    const pool = new pg.Pool({
      connectionString: 'postgres://app:hunter2-secret@127.0.0.1:1/ledger',
      connectionTimeoutMillis: 2000,
    })
    pool.on('error', () => {})
    const store = postgresStore({ pool, logger: false })
    const error = await store.ready().then(
      () => undefined,
      (e: Error) => e,
    )
    expect(error?.message).toMatch(/PostgreSQL at 127\.0\.0\.1:1\/ledger as user app/)
    expect(error?.message).toMatch(/connectionString/)
    expect(error?.message).not.toContain('hunter2')
    await pool.end()
  })
})

/**
 * The Postgres store on postgres.js (`postgresStore({ sql })`): the shared
 * store contract, the one-row-per-conversion cases and the receiver cases, as
 * on node-postgres, with ctx.tx the transaction's own tagged template.
 */
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createReceiver } from '@affiliate-webhooks/core'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import { postgresStore } from '@affiliate-webhooks/postgres'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { storeContract } from '../stores/store-contract.js'
import { createPostgresTestDatabase, type TestDatabase } from '../support/postgres-db.js'
import { postgresMisuseCases } from './postgres-misuse-cases.js'
import { sqlReceiverCases } from './sql-receiver-cases.js'
import { sqlStoreCases } from './sql-store-cases.js'

const toDollars = (sql: string) => {
  let n = 0
  return sql.replace(/\?/g, () => `$${++n}`)
}

let db: TestDatabase
let sql: postgres.Sql
beforeAll(async () => {
  db = await createPostgresTestDatabase()
  // Room for the claims the cases hold open, each on a connection of its own.
  sql = postgres(db.url, { max: 30, onnotice: () => {} })
})
afterAll(async () => {
  await sql.end({ timeout: 1 })
  await db.drop()
})

const prefixFor = (prefix: string | undefined) =>
  prefix === undefined
    ? 'aw_'
    : `aw_${prefix
        .replace(/[^a-z0-9]/gi, '')
        .toLowerCase()
        .slice(-8)}_`

storeContract('postgresStore (postgres.js)', ({ prefix, ...timings }) =>
  postgresStore({ sql, tablePrefix: prefixFor(prefix), ...timings }),
)

sqlStoreCases('postgresStore (postgres.js)', async (options) => postgresStore({ sql, ...options }))

sqlReceiverCases<postgres.TransactionSql>('postgresStore (postgres.js)', {
  store: (options) => postgresStore({ sql, ...options }),
  query: (tx, text, params) => tx.unsafe(text, params as never[]),
  exec: async (text, params) => {
    await sql.unsafe(toDollars(text), params as never[])
  },
  count: async (text, params) =>
    Number((await sql.unsafe(toDollars(text), params as never[]))[0]?.n),
  ledgerDdl: (table) =>
    `CREATE TABLE ${table} (event_id text PRIMARY KEY, conversion_id bigint, commission numeric)`,
  insertSql: (table) => `INSERT INTO ${table} VALUES ($1, $2, $3)`,
  spoil: {
    title: 'caught a failed statement (the transaction is aborted)',
    run: async (tx) => {
      await tx`SELECT no_such_column FROM pg_class`.catch(() => {})
    },
    status: 500,
    code: 'handler_failed',
  },
})

// Stores on small instances of their own: the pool's size is part of the case.
const small: postgres.Sql[] = []
afterAll(async () => {
  await Promise.all(small.map((each) => each.end({ timeout: 1 })))
})
postgresMisuseCases<postgres.TransactionSql>('postgresStore (postgres.js)', {
  store: (max) => {
    const own = postgres(db.url, { max, onnotice: () => {} })
    small.push(own)
    return postgresStore({ sql: own, logger: false })
  },
  query: (tx, text, params = []) => tx.unsafe(text, params as never[]),
  rows: async (text, params = []) => (await sql.unsafe(text, params as never[])) as never,
})

describe('postgresStore (postgres.js): the driver itself', () => {
  it('refuses an instance with max: 1, naming the deadlock and the fix', () => {
    const one = postgres(db.url, { max: 1 })
    expect(() => postgresStore({ sql: one })).toThrow(/max: 1.*max: 2 or more/s)
    expect(() => postgresStore({ sql: {} as postgres.Sql })).toThrow(/postgres\.js instance/)
  })

  it('works on an instance with fetch_types off: setup, a delivery handled once, the failure streak', async () => {
    const typeless = postgres(db.url, { max: 2, fetch_types: false, onnotice: () => {} })
    small.push(typeless)
    const tablePrefix = 'aw_typeless_'
    // Tables left without their version row: setup reads their columns before going on.
    await sql.unsafe(`CREATE TABLE ${tablePrefix}streak (name text, count integer)`)
    const refused = postgresStore({ sql: typeless, tablePrefix })
    await expect(refused.ready()).rejects.toThrow(/lacks the column\(s\) codes, expires_at/)
    await sql.unsafe(`DROP TABLE ${tablePrefix}streak`)

    const store = postgresStore({ sql: typeless, tablePrefix })
    await store.ready()
    await postgresStore({ sql: typeless, tablePrefix }).ready()
    await store.recordAnswer?.('store_unavailable')
    expect(await store.recordAnswer?.('handler_failed')).toEqual({
      count: 2,
      recentCodes: ['handler_failed', 'store_unavailable'],
    })
    let runs = 0
    const secret = 'whsec_typeless'
    const receiver = createReceiver({
      secret,
      store,
      onConversion: () => {
        runs += 1
      },
    })
    const signed = await signedDelivery({ secret, event: buildConversionEvent() })
    const input = { headers: signed.headers, rawBody: new TextEncoder().encode(signed.body) }
    expect((await receiver.receive(input)).outcome).toBe('processed')
    expect((await receiver.receive(input)).outcome).toBe('duplicate')
    expect(runs).toBe(1)
  })

  it("writes through ctx.tx as a tagged template, with the mark; the outer sql is not the delivery's", async () => {
    await sql`CREATE TABLE IF NOT EXISTS tagged_ledger (event_id text PRIMARY KEY, commission numeric)`
    const secret = 'whsec_postgresjs'
    const receiver = createReceiver({
      secret,
      store: postgresStore({ sql }),
      async onConversion(conversion, event, ctx) {
        await ctx.tx`INSERT INTO tagged_ledger ${ctx.tx({ event_id: event.id, commission: conversion.commission })}`
      },
    })
    const event = buildConversionEvent({ conversion: { id: 5151, commission: '3.10' } })
    const signed = await signedDelivery({ secret, event })
    const input = { headers: signed.headers, rawBody: new TextEncoder().encode(signed.body) }
    expect((await receiver.receive(input)).outcome).toBe('processed')
    expect((await receiver.receive(input)).outcome).toBe('duplicate')
    expect(await sql`SELECT commission FROM tagged_ledger WHERE event_id = ${event.id}`).toEqual([
      { commission: '3.10' },
    ])
  })

  it('refuses ctx.tx once the claim is settled: a late query never joins another transaction', async () => {
    const store = postgresStore({ sql })
    const begun = await store.begin({ eventId: `evt_late_${randomUUID()}`, order: 1 })
    if (begun.status !== 'claimed') throw new Error(`expected claimed, got ${begun.status}`)
    const tx = begun.claim.tx as postgres.TransactionSql
    expect(await tx`SELECT 1 AS one`).toEqual([{ one: 1 }])
    expect(await store.commit(begun.claim)).toBe(true)
    expect(() => tx`SELECT 1`).toThrow(/transaction is over/)
  })

  it('refuses at once, before it reaches the server, every statement that would end or split the transaction; the transaction goes on and commits', async () => {
    // An instance of its own with max: 2: a statement that reached the server would
    // end the transaction, and postgres.js would hand the connection on.
    const fresh = postgres(db.url, { max: 2, onnotice: () => {} })
    const dir = mkdtempSync(join(tmpdir(), 'aw-pgjs-'))
    try {
      const file = join(dir, 'commit.sql')
      writeFileSync(file, '-- a migration\nCREATE TABLE IF NOT EXISTS file_made (id int);\nCOMMIT;')
      await sql`CREATE TABLE IF NOT EXISTS refused_ledger (event_id text PRIMARY KEY)`
      const store = postgresStore({ sql: fresh })
      const eventId = `evt_refused_${randomUUID().slice(0, 8)}`
      const begun = await store.begin({ eventId, conversionId: 4200, order: 10 })
      if (begun.status !== 'claimed') throw new Error(`expected claimed, got ${begun.status}`)
      const tx = begun.claim.tx as postgres.TransactionSql
      await tx`INSERT INTO refused_ledger VALUES (${eventId})`
      const attempts: [string, () => Promise<unknown>, string][] = [
        ['tagged COMMIT', () => tx`COMMIT`, 'COMMIT'],
        ['unsafe ROLLBACK', () => tx.unsafe('ROLLBACK'), 'ROLLBACK'],
        ['unsafe begin', () => tx.unsafe('begin'), 'BEGIN'],
        ['START TRANSACTION', () => tx.unsafe('START TRANSACTION'), 'START TRANSACTION'],
        ['END', () => tx.unsafe('END'), 'END'],
        ['ABORT', () => tx.unsafe('abort'), 'ABORT'],
        ['a multi-statement text', () => tx.unsafe('SELECT 1; COMMIT; SELECT 2'), 'COMMIT'],
        ['a fragment', () => tx`SELECT 1; ${tx.unsafe('ROLLBACK')}`, 'ROLLBACK'],
        ['PREPARE TRANSACTION', () => tx.unsafe("PREPARE TRANSACTION 'x'"), 'PREPARE TRANSACTION'],
        ['a file', () => tx.file(file), 'COMMIT'],
      ]
      for (const [what, run, statement] of attempts) {
        const started = performance.now()
        const error = await run().then(
          () => new Error(`${what}: not refused`),
          (e: Error) => e,
        )
        expect([what, (error as { code?: string }).code]).toEqual([what, 'ERR_AW_TX_CONTROL'])
        expect(error.message).toContain(`refused ${statement}`)
        expect(error.message).toMatch(/Let the store commit.*savepoint/)
        // Nothing went to the server: no round trip to wait for.
        expect(performance.now() - started).toBeLessThan(1000)
      }
      // The driver's own ways to end or leave the transaction are refused too.
      expect(() => (tx as unknown as postgres.Sql).begin(async () => {})).toThrow(/refused/)
      expect(() => (tx as unknown as postgres.ReservedSql).release()).toThrow(/refused/)
      expect(() => (tx as unknown as postgres.Sql).reserve()).toThrow(/refused/)
      expect(() => tx.prepare('two_phase')).toThrow(/refused/)
      // Savepoints and DDL (transactional in PostgreSQL) are allowed.
      await tx.savepoint(
        (sp) => sp`CREATE TABLE refused_ddl_${sql.unsafe(eventId.slice(-8))} (id int)`,
      )
      expect(await tx`SELECT 1 AS one`).toEqual([{ one: 1 }])
      expect(await store.commit(begun.claim)).toBe(true)
      expect(await store.peek({ eventId, conversionId: 4200, order: 10 })).toBe('duplicate')
      expect(
        await sql`SELECT count(*)::int AS n FROM refused_ledger WHERE event_id = ${eventId}`,
      ).toEqual([{ n: 1 }])
      expect(await sql`SELECT to_regclass('file_made') IS NULL AS absent`).toEqual([
        { absent: true },
      ])
    } finally {
      rmSync(dir, { recursive: true, force: true })
      await fresh.end({ timeout: 1 })
    }
  })

  it('answers 503-worthy errors, not a hang, when every connection is busy past acquireTimeoutMs', async () => {
    const small = postgres(db.url, { max: 2, onnotice: () => {} })
    try {
      const store = postgresStore({ sql: small, acquireTimeoutMs: 300 })
      await store.ready()
      const held = [
        await store.begin({ eventId: `evt_busy_${randomUUID()}`, order: 1 }),
        await store.begin({ eventId: `evt_busy_${randomUUID()}`, order: 1 }),
      ]
      const started = performance.now()
      await expect(store.begin({ eventId: `evt_busy_${randomUUID()}`, order: 1 })).rejects.toThrow(
        /no database connection within 300 ms/,
      )
      expect(performance.now() - started).toBeLessThan(2000)
      for (const begun of held) if (begun.status === 'claimed') await store.release(begun.claim)
    } finally {
      await small.end({ timeout: 1 })
    }
  })
})

describe('postgresStore (postgres.js): leases that end while the transaction idles', () => {
  it('rolls back at the lease before the server ends the session: no session ended under the driver, no uncaught write', async () => {
    // postgres.js 3.4.9 throws an uncaught TypeError when the server closes a connection
    // in the moment a write to it is queued (porsager/postgres#1208). With the server's
    // idle bound equal to the lease, about 1 in 13 of these claims met it (30 of 400).
    const own = postgres(db.url, { max: 20, onnotice: () => {} })
    const store = postgresStore({
      sql: own,
      logger: false,
      tablePrefix: 'aw_idle_',
      lockWaitMs: 100,
    })
    const failures: string[] = []
    try {
      for (let round = 0; round < 10; round++) {
        await Promise.all(
          Array.from({ length: 20 }, async (_, i) => {
            const eventId = `evt_idle_${randomUUID()}`
            const conversionId = 70_000 + round * 20 + i
            const slow = await store.begin({ eventId, conversionId, order: 1, leaseMs: 100 })
            expect(slow.status).toBe('claimed')
            await new Promise((resolve) => setTimeout(resolve, 150))
            const retry = await store.begin({ eventId, conversionId, order: 1, leaseMs: 5000 })
            if (retry.status !== 'claimed') throw new Error(`retry: ${retry.status}`)
            expect(await store.commit(retry.claim)).toBe(true)
            if (slow.status === 'claimed') expect(await store.commit(slow.claim)).toBe(false)
          }).map((run) => run.catch((error: Error) => failures.push(error.message))),
        )
      }
    } finally {
      await own.end({ timeout: 1 })
    }
    expect(failures).toEqual([])
  }, 60_000)
})

/** A promise and the function that settles it. */
function gate() {
  let open!: () => void
  const opened = new Promise<void>((resolve) => {
    open = resolve
  })
  return { open, opened }
}

describe('postgresStore (postgres.js): a handler that ends its own transaction', () => {
  it("never corrupts another delivery's transaction: B is answered 2xx only with its row, and runs once", async () => {
    // Two connections: C holds one throughout, so B can only get the one A's
    // handler freed by ending its transaction (postgres.js 3.4.9 hands a
    // sql.begin connection back to its pool once the server reports it idle).
    const small = postgres(db.url, { max: 2, onnotice: () => {} })
    const secret = 'whsec_postgresjs_ended'
    const table = `ended_${randomUUID().slice(0, 8)}`
    await sql.unsafe(`CREATE TABLE ${table} (event_id text PRIMARY KEY)`)
    const gates = { cEntered: gate(), cGo: gate(), aEnded: gate(), aGo: gate() }
    const bEntered = gate()
    const bGo = gate()
    const calls = new Map<string, number>()
    const receiver = createReceiver({
      secret,
      logger: false,
      answerWithinMs: 20_000,
      store: postgresStore({ sql: small, logger: false }),
      async onConversion(conversion, event, ctx) {
        calls.set(event.id, (calls.get(event.id) ?? 0) + 1)
        await ctx.tx.unsafe(`INSERT INTO ${table} VALUES ($1)`, [event.id])
        if (conversion.id === 91_001) {
          gates.cEntered.open()
          await gates.cGo.opened
        } else if (conversion.id === 91_002) {
          try {
            await ctx.tx.unsafe('ROLLBACK')
          } finally {
            gates.aEnded.open()
            await gates.aGo.opened
          }
        } else {
          bEntered.open()
          await bGo.opened
        }
      },
    })
    const send = async (event: object) => {
      const signed = await signedDelivery({ secret, event })
      return receiver.receive({
        headers: signed.headers,
        rawBody: new TextEncoder().encode(signed.body),
      })
    }
    const c = buildConversionEvent({ conversion: { id: 91_001 } })
    const a = buildConversionEvent({ conversion: { id: 91_002 } })
    const b = buildConversionEvent({ conversion: { id: 91_003 } })
    try {
      const cAnswer = send(c)
      await gates.cEntered.opened
      const aAnswer = send(a)
      await gates.aEnded.opened
      const bAnswer = send(b)
      // B's handler may not get a connection until A's is settled: either way, go on.
      await Promise.race([bEntered.opened, new Promise((resolve) => setTimeout(resolve, 300))])
      gates.aGo.open()
      const aResult = await aAnswer
      bGo.open()
      const bResult = await bAnswer
      gates.cGo.open()
      const cResult = await cAnswer
      const rows = async (id: string) =>
        Number(
          (await sql.unsafe(`SELECT count(*) AS n FROM ${table} WHERE event_id = $1`, [id]))[0]?.n,
        )
      const seen = {
        a: [aResult.status, aResult.error?.code, await rows(a.id)],
        b: [bResult.status, bResult.outcome, await rows(b.id), calls.get(b.id)],
        c: [cResult.status, cResult.outcome, await rows(c.id)],
      }
      expect(seen).toEqual({
        // A's ROLLBACK is refused before it reaches the server; the handler lets it propagate.
        a: [500, 'handler_failed', 0],
        b: [200, 'processed', 1, 1],
        c: [200, 'processed', 1],
      })
    } finally {
      gates.aGo.open()
      bGo.open()
      gates.cGo.open()
      await small.end({ timeout: 1 })
    }
  }, 30_000)
})

describe('postgresStore (postgres.js): every wait of commit and release is bounded', () => {
  it("release and commit answer within the store's bound while a statement the handler left runs; the connection comes back once it ends", async () => {
    const own = postgres(db.url, { max: 2, onnotice: () => {} })
    try {
      const store = postgresStore({ sql: own, logger: false })
      await store.ready()
      for (const settle of ['release', 'commit'] as const) {
        const begun = await store.begin({
          eventId: `evt_bound_${randomUUID()}`,
          order: 1,
          leaseMs: 30_000,
        })
        if (begun.status !== 'claimed') throw new Error(`expected claimed, got ${begun.status}`)
        const tx = begun.claim.tx as postgres.TransactionSql
        const [{ pid }] = (await tx`SELECT pg_backend_pid() AS pid`) as unknown as [{ pid: number }]
        // A handler that returns without awaiting its statement.
        const left = tx`SELECT pg_sleep(30)`.catch((error: Error) => error)
        await new Promise((resolve) => setTimeout(resolve, 100))
        // Ends the sleep at 12 s whatever happens, so a store that waits for it fails the test.
        const cancel = () => sql`SELECT pg_cancel_backend(${pid})`
        const fallback = setTimeout(cancel, 12_000)
        const started = performance.now()
        const settled =
          settle === 'release'
            ? await store.release(begun.claim).then(() => 'released')
            : await store.commit(begun.claim).then(String, (error: Error) => error.message)
        const waited = performance.now() - started
        clearTimeout(fallback)
        await cancel()
        expect([settle, settled]).toEqual([
          settle,
          settle === 'release'
            ? 'released'
            : expect.stringMatching(/did not answer within 5000 ms/),
        ])
        // STORE_STATEMENT_TIMEOUT_MS (5 s), with room for a loaded machine; never the sleep.
        expect(waited).toBeLessThan(9000)
        expect(((await left) as { code?: string }).code).toBe('57014')
      }
      // Both connections came back once the sleeps ended: new claims get them.
      const again = await Promise.all([
        store.begin({ eventId: `evt_bound_${randomUUID()}`, order: 1 }),
        store.begin({ eventId: `evt_bound_${randomUUID()}`, order: 1 }),
      ])
      for (const begun of again) {
        if (begun.status !== 'claimed') throw new Error(`expected claimed, got ${begun.status}`)
        expect(await store.commit(begun.claim)).toBe(true)
      }
    } finally {
      await own.end({ timeout: 1 })
    }
  }, 40_000)

  it('a handler that never settles: at the lease its transaction rolls back and its connection returns, with no commit or release', async () => {
    const own = postgres(db.url, { max: 2, onnotice: () => {} })
    try {
      const store = postgresStore({ sql: own, logger: false, acquireTimeoutMs: 3000 })
      const eventId = `evt_never_${randomUUID()}`
      const claims = await Promise.all([
        store.begin({ eventId, conversionId: 92_001, order: 1, leaseMs: 200 }),
        store.begin({ eventId: `${eventId}_2`, order: 1, leaseMs: 200 }),
      ])
      expect(claims.map((each) => each.status)).toEqual(['claimed', 'claimed'])
      // Both connections are held until the lease ends; then the retry gets one and commits.
      const retry = await store.begin({ eventId, conversionId: 92_001, order: 1 })
      if (retry.status !== 'claimed') throw new Error(`expected claimed, got ${retry.status}`)
      expect(await store.commit(retry.claim)).toBe(true)
      // A commit of the abandoned claim after its lease finds nothing: false at once.
      const [first] = claims
      if (first?.status === 'claimed') {
        const started = performance.now()
        expect(await store.commit(first.claim)).toBe(false)
        expect(performance.now() - started).toBeLessThan(1000)
      }
    } finally {
      await own.end({ timeout: 1 })
    }
  })
})

describe('postgresStore (postgres.js): a session that ends under a claim', () => {
  it('sends nothing more on it: ctx.tx refuses (ERR_AW_TX_GONE), commit fails as the store (503), release sends nothing, and the process lives on', async () => {
    const own = postgres(db.url, { max: 2, onnotice: () => {} })
    try {
      const store = postgresStore({ sql: own })
      for (const end of ['commit', 'release'] as const) {
        const eventId = `evt_closed_${end}_${randomUUID().slice(0, 8)}`
        const begun = await store.begin({ eventId, conversionId: 93_001, order: Date.now() })
        if (begun.status !== 'claimed') throw new Error(`expected claimed, got ${begun.status}`)
        const tx = begun.claim.tx as postgres.TransactionSql
        const [{ pid }] = (await tx`SELECT pg_backend_pid() AS pid`) as unknown as [{ pid: number }]
        await sql`SELECT pg_terminate_backend(${pid})`
        // Gone on the server; the driver learns it from its socket, with nothing
        // to await from outside: a short pause for that, then nothing may be sent.
        await expect
          .poll(
            async () =>
              (await sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ${pid}`)[0]?.n,
          )
          .toBe(0)
        await new Promise((resolve) => setTimeout(resolve, 300))
        const next = async () => {
          await tx`SELECT 1`
        }
        await expect(next()).rejects.toMatchObject({ code: 'ERR_AW_TX_GONE' })
        if (end === 'commit') {
          const failed = await store.commit(begun.claim).then(
            () => undefined,
            (error: Error & { code?: string }) => error,
          )
          expect(failed?.message).toMatch(/connection closed while the handler ran/)
          expect(failed?.code).not.toBe('handler_failed')
        } else {
          await store.release(begun.claim)
        }
        expect(await store.peek({ eventId, conversionId: 93_001, order: 1 })).toBe('unsettled')
      }
      // The instance still serves deliveries: a new claim commits.
      const again = await store.begin({
        eventId: `evt_closed_after_${randomUUID().slice(0, 8)}`,
        order: 1,
      })
      if (again.status !== 'claimed') throw new Error(`expected claimed, got ${again.status}`)
      expect(await store.commit(again.claim)).toBe(true)
    } finally {
      await own.end({ timeout: 1 })
    }
  })
})

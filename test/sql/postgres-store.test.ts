import { randomUUID } from 'node:crypto'
import { postgresSchema, postgresStore } from '@affiliate-webhooks/postgres'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { storeContract } from '../stores/store-contract.js'
import { createPostgresTestDatabase, type TestDatabase } from '../support/postgres-db.js'
import { sqlReceiverCases } from './sql-receiver-cases.js'

/** `?` placeholders as node-postgres has them: $1, $2 ... */
const toDollars = (sql: string) => {
  let n = 0
  return sql.replace(/\?/g, () => `$${++n}`)
}

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

sqlReceiverCases('postgresStore', {
  store: (options) => postgresStore({ pool: db.pool, logger: false, ...options }),
  exec: async (sql, params) => {
    await db.pool.query(toDollars(sql), params)
  },
  count: async (sql, params) => Number((await db.pool.query(toDollars(sql), params)).rows[0].n),
  ledgerDdl: (table) =>
    `CREATE TABLE ${table} (event_id text PRIMARY KEY, conversion_id bigint, commission numeric)`,
  insertSql: (table) => `INSERT INTO ${table} VALUES ($1, $2, $3)`,
  spoil: {
    title: 'caught a failed statement (the transaction is aborted)',
    run: async (tx) => {
      await tx.query('SELECT no_such_column FROM pg_class').catch(() => {})
    },
    // The handler's doing: answered as if it had thrown.
    status: 500,
    code: 'handler_failed',
  },
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

  it('refuses store tables without a version row that lack its columns (an older version made them)', async () => {
    const tablePrefix = `aw_pre_${randomUUID().slice(0, 6)}_`
    await db.pool.query(
      `CREATE TABLE ${tablePrefix}events (event_id text PRIMARY KEY, done_at timestamptz)`,
    )
    const store = postgresStore({ pool: db.pool, tablePrefix, logger: false })
    await expect(store.ready()).rejects.toThrow(
      new RegExp(`${tablePrefix}events exists.*lacks the column\\(s\\) expires_at.*older version`),
    )
    // Nothing stamped (the setup's transaction rolled back): the next start refuses again.
    const { rows } = await db.pool.query('SELECT to_regclass($1) IS NULL AS gone', [
      `${tablePrefix}schema`,
    ])
    expect(rows[0].gone).toBe(true)
  })

  it('accepts tables with every column but no version row (a setup that stopped half-way)', async () => {
    const tablePrefix = `aw_half_${randomUUID().slice(0, 6)}_`
    await db.pool.query(
      `CREATE TABLE ${tablePrefix}events (event_id text PRIMARY KEY, expires_at timestamptz NOT NULL)`,
    )
    const store = postgresStore({ pool: db.pool, tablePrefix, logger: false })
    await store.ready()
    expect((await store.begin({ eventId: 'evt_half', order: 1 })).status).toBe('claimed')
  })

  it('refuses a version row whose functions are missing, saying to run the DDL again', async () => {
    const tablePrefix = `aw_fn_${randomUUID().slice(0, 6)}_`
    await db.pool.query(postgresSchema({ tablePrefix }))
    await db.pool.query(`DROP FUNCTION ${tablePrefix}commit`)
    const store = postgresStore({ pool: db.pool, tablePrefix, logger: false })
    await expect(store.ready()).rejects.toThrow(/functions .*missing.*sql schema --postgres/)
  })

  it('creates the schema it is given when it does not exist, and prints CREATE SCHEMA in its DDL', async () => {
    const schema = `aw_s_${randomUUID().slice(0, 6)}`
    expect(postgresSchema({ schema })).toContain(`CREATE SCHEMA IF NOT EXISTS ${schema}`)
    const store = postgresStore({ pool: db.pool, schema, logger: false })
    const begun = await store.begin({ eventId: 'evt_schema', order: 1 })
    expect(begun.status).toBe('claimed')
    if (begun.status === 'claimed') expect(await store.commit(begun.claim)).toBe(true)
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM ${schema}.aw_events`)
    expect(rows[0].n).toBe(1)
    await db.pool.query(`DROP SCHEMA ${schema} CASCADE`)
  })

  it('refuses a missing pool and a pg.Client with a TypeError saying what it needs', () => {
    expect(() => postgresStore(undefined as never)).toThrow(/`pool` is required/)
    const client = new pg.Client({ connectionString: 'postgres://127.0.0.1:1/none' })
    expect(() => postgresStore({ pool: client as never })).toThrow(
      /must be a node-postgres Pool.*not a Client/,
    )
  })

  it('keeps the process alive when the database ends idle clients and the logger is off', async () => {
    const pool = new pg.Pool({ connectionString: db.url, max: 2, application_name: 'aw_term' })
    const store = postgresStore({ pool, logger: false })
    const begun = await store.begin({ eventId: `evt_term_${randomUUID()}`, order: 1 })
    if (begun.status === 'claimed') await store.commit(begun.claim)
    expect(pool.idleCount).toBeGreaterThan(0)
    await db.pool.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE application_name = 'aw_term' AND state = 'idle'`,
    )
    // No listener of the test's own: an unheard 'error' would end the test process.
    while (pool.totalCount > 0) await new Promise((resolve) => setTimeout(resolve, 20))
    const again = await store.begin({ eventId: `evt_term_${randomUUID()}`, order: 1 })
    expect(again.status).toBe('claimed')
    if (again.status === 'claimed') expect(await store.commit(again.claim)).toBe(true)
    await pool.end()
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
    // The driver's reason, code and words: here, nothing listens on port 1.
    expect(error?.message).toMatch(/ECONNREFUSED: connect ECONNREFUSED/)
    expect(error?.message).not.toContain('hunter2')
    await pool.end()
  })
})

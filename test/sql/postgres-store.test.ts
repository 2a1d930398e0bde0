import { randomUUID } from 'node:crypto'
import { postgresSchema, postgresStore } from '@affiliate-webhooks/postgres'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { storeContract } from '../stores/store-contract.js'
import { createPostgresTestDatabase, type TestDatabase } from '../support/postgres-db.js'
import { postgresMisuseCases } from './postgres-misuse-cases.js'
import { sqlReceiverCases } from './sql-receiver-cases.js'
import { sqlStoreCases } from './sql-store-cases.js'

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

sqlStoreCases('postgresStore', async (options) =>
  postgresStore({ pool: db.pool, logger: false, ...options }),
)

sqlReceiverCases('postgresStore', {
  store: (options) => postgresStore({ pool: db.pool, logger: false, ...options }),
  query: (tx, sql, params) => tx.query(sql, params),
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

const small: pg.Pool[] = []
afterAll(async () => {
  await Promise.all(small.map((each) => each.end()))
})
postgresMisuseCases<pg.PoolClient>('postgresStore', {
  store: (max) => {
    const pool = new pg.Pool({ connectionString: db.url, max })
    small.push(pool)
    return postgresStore({ pool, logger: false })
  },
  query: (tx, text, params) => tx.query(text, params),
  rows: async (text, params) => (await db.pool.query(text, params)).rows,
})

/**
 * Sends `text` in a pg.Query whose text is made as it is sent: what the guard
 * cannot see (a library's submittable that builds its text late).
 */
const sendUnseen = (tx: pg.PoolClient, text: string) =>
  new Promise<void>((resolve, reject) => {
    const query = new pg.Query({ text: 'SELECT 1' }) as pg.Query & {
      text: string
      callback: (error: Error | null) => void
    }
    query.callback = (error) => (error ? reject(error) : resolve())
    const submit = query.submit.bind(query)
    query.submit = (connection) => {
      query.text = text
      return submit(connection)
    }
    tx.query(query)
  })

describe('postgresStore: what a handler may not do with ctx.tx', () => {
  it('refuses at once, before it reaches the server, every statement that would end or split the transaction; the transaction goes on and commits', async () => {
    await db.pool.query('CREATE TABLE IF NOT EXISTS refused_ledger (event_id text PRIMARY KEY)')
    const store = postgresStore({ pool: db.pool, logger: false })
    const eventId = `evt_refused_${randomUUID().slice(0, 8)}`
    const begun = await store.begin({ eventId, conversionId: 4300, order: 10 })
    if (begun.status !== 'claimed') throw new Error(`expected claimed, got ${begun.status}`)
    const tx = begun.claim.tx as pg.PoolClient
    await tx.query('INSERT INTO refused_ledger VALUES ($1)', [eventId])
    const viaCallback = (text: string) =>
      new Promise((resolve, reject) => {
        tx.query(text, (error: Error | null) => (error ? reject(error) : resolve(undefined)))
      })
    const viaSubmittable = (text: string) =>
      new Promise((resolve, reject) => {
        const query = new pg.Query(text)
        query.on('error', reject)
        query.on('end', resolve)
        tx.query(query)
      })
    const attempts: [string, () => Promise<unknown>, string][] = [
      ['COMMIT', () => tx.query('COMMIT'), 'COMMIT'],
      ['ROLLBACK, as { text }', () => tx.query({ text: 'ROLLBACK' }), 'ROLLBACK'],
      ['BEGIN, with a callback', () => viaCallback('BEGIN'), 'BEGIN'],
      [
        'START TRANSACTION',
        () => tx.query('start transaction isolation level serializable'),
        'START TRANSACTION',
      ],
      ['END', () => tx.query('END'), 'END'],
      ['ABORT', () => tx.query('abort'), 'ABORT'],
      ['a multi-statement text', () => tx.query('SELECT 1; COMMIT; SELECT 2'), 'COMMIT'],
      ['a pg.Query', () => viaSubmittable('ROLLBACK'), 'ROLLBACK'],
      ['PREPARE TRANSACTION', () => tx.query("PREPARE TRANSACTION 'x'"), 'PREPARE TRANSACTION'],
    ]
    for (const [what, run, statement] of attempts) {
      const error = await run().then(
        () => new Error(`${what}: not refused`),
        (e: Error) => e,
      )
      expect([what, (error as { code?: string }).code]).toEqual([what, 'ERR_AW_TX_CONTROL'])
      expect(error.message).toContain(`refused ${statement}`)
      expect(error.message).toMatch(/Let the store commit.*savepoint/)
    }
    // The client is the store's to give back.
    expect(() => tx.release()).toThrow(/refused ctx\.tx\.release/)
    // Still a PoolClient for the user's tools; DDL (transactional here) and savepoints are allowed.
    expect(tx).toBeInstanceOf(pg.Client)
    expect(tx.escapeLiteral("it's")).toBe("'it''s'")
    await tx.query('SAVEPOINT before_ddl')
    await tx.query(`CREATE TABLE refused_ddl_${eventId.slice(-8)} (id int)`)
    expect(await store.commit(begun.claim)).toBe(true)
    expect(await store.peek({ eventId, conversionId: 4300, order: 10 })).toBe('duplicate')
    const { rows } = await db.pool.query(
      'SELECT count(*)::int AS n FROM refused_ledger WHERE event_id = $1',
      [eventId],
    )
    expect(rows).toEqual([{ n: 1 }])
    // Once settled, ctx.tx takes no more queries: the client may serve another delivery now.
    await expect(tx.query('SELECT 1')).rejects.toThrow(/transaction is over/)
  })

  for (const conversionId of [4200, undefined]) {
    it(`${conversionId === undefined ? 'without' : 'with'} a conversion: a ROLLBACK (and BEGIN) the guard cannot see is caught by the held check: handler_failed, nothing marked`, async () => {
      const store = postgresStore({ pool: db.pool, logger: false })
      const eventId = `evt_ended_${randomUUID().slice(0, 8)}`
      for (const after of [undefined, 'BEGIN']) {
        const begun = await store.begin({ eventId, conversionId, order: 10 })
        if (begun.status !== 'claimed') throw new Error(`expected claimed, got ${begun.status}`)
        const tx = begun.claim.tx as pg.PoolClient
        await sendUnseen(tx, 'ROLLBACK')
        // The protocol said the transaction ended: ctx.tx takes nothing more.
        if (after !== undefined) {
          await expect(sendUnseen(tx, after)).rejects.toMatchObject({ code: 'ERR_AW_TX_GONE' })
        }
        const error = await store.commit(begun.claim).then(
          () => undefined,
          (e: Error) => e,
        )
        expect(error).toMatchObject({ code: 'handler_failed', status: 500 })
        expect(error?.message).toMatch(
          /the handler ended the delivery's transaction itself on ctx\.tx .*Nothing it wrote in this attempt was kept and the event is not marked handled: the service's retry runs the handler again/,
        )
        expect(await store.peek({ eventId, conversionId, order: 10 })).toBe('unsettled')
      }
      const retry = await store.begin({ eventId, conversionId, order: 10 })
      if (retry.status !== 'claimed') throw new Error(`expected claimed, got ${retry.status}`)
      expect(await store.commit(retry.claim)).toBe(true)
      expect(await store.peek({ eventId, conversionId, order: 10 })).toBe('duplicate')
    })
  }

  it("leaves the handler's own lock_timeout as the session had it (lockWaitMs bounds the claim only)", async () => {
    const store = postgresStore({ pool: db.pool, logger: false, lockWaitMs: 1500 })
    const begun = await store.begin({
      eventId: `evt_lt_${randomUUID()}`,
      conversionId: 4201,
      order: 1,
    })
    if (begun.status !== 'claimed') throw new Error(`expected claimed, got ${begun.status}`)
    const { rows } = await (begun.claim.tx as pg.PoolClient).query('SHOW lock_timeout')
    expect(rows).toEqual([{ lock_timeout: '0' }])
    await store.release(begun.claim)
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
    await expect(store.ready()).rejects.toThrow(/version 0.*needs 3.*sql schema --postgres/s)
    await expect(store.begin({ eventId: 'evt_old', order: 1 })).rejects.toThrow(/version 0/)
  })

  it('refuses layout-1 tables naming the upgrade; the upgrade it names keeps every watermark', async () => {
    const tablePrefix = `aw_one_${randomUUID().slice(0, 6)}_`
    // Layout 1 as version 1 of this package left it: a mark per event, a watermark per conversion.
    await db.pool.query(`CREATE TABLE ${tablePrefix}schema (version integer NOT NULL);
      INSERT INTO ${tablePrefix}schema VALUES (1);
      CREATE TABLE ${tablePrefix}events (event_id text PRIMARY KEY, expires_at timestamptz NOT NULL);
      CREATE TABLE ${tablePrefix}conversions (conversion_id bigint PRIMARY KEY, watermark bigint NOT NULL, expires_at timestamptz NOT NULL);
      CREATE TABLE ${tablePrefix}streak (name text PRIMARY KEY, count integer NOT NULL, codes text[] NOT NULL, expires_at timestamptz NOT NULL);
      CREATE FUNCTION ${tablePrefix}begin(text) RETURNS text LANGUAGE sql AS 'SELECT 1::text';
      CREATE FUNCTION ${tablePrefix}commit(text) RETURNS void LANGUAGE sql AS '';
      INSERT INTO ${tablePrefix}events VALUES ('evt_one_done', now() + interval '1 day');
      INSERT INTO ${tablePrefix}conversions VALUES (4100, 5000, now() + interval '1 day');`)
    const store = postgresStore({ pool: db.pool, tablePrefix, logger: false })
    const refused = await store.ready().then(
      () => undefined,
      (error: Error) => error.message,
    )
    expect(refused).toMatch(
      /layout version 1 .*needs layout 3.*Stop every process of the older version, then upgrade in place/,
    )
    expect(refused).toMatch(/or drop the tables/i)
    // The statements it names, run as they are: the store then starts on layout 3.
    const upgrade = /upgrade in place, keeping every watermark: (.*;) The next start/.exec(
      refused ?? '',
    )?.[1]
    expect(upgrade).toContain(`ALTER TABLE ${tablePrefix}conversions ADD COLUMN`)
    await db.pool.query(upgrade as string)
    const again = postgresStore({ pool: db.pool, tablePrefix, logger: false })
    await again.ready()
    const { rows } = await db.pool.query(`SELECT version FROM ${tablePrefix}schema`)
    expect(rows).toEqual([{ version: 3 }])
    // The layout-1 watermark and mark still decide.
    expect(
      (await again.begin({ eventId: 'evt_one_older', conversionId: 4100, order: 4000 })).status,
    ).toBe('stale')
    expect(
      (await again.begin({ eventId: 'evt_one_done', conversionId: 4100, order: 5000 })).status,
    ).toBe('duplicate')
    const newer = await again.begin({ eventId: 'evt_one_newer', conversionId: 4100, order: 6000 })
    expect(newer.status).toBe('claimed')
    if (newer.status === 'claimed') expect(await again.commit(newer.claim)).toBe(true)
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

  it('prunes expired marks and watermarks, and never a row a claim holds', async () => {
    const tablePrefix = `aw_prune_${randomUUID().slice(0, 6)}_`
    const store = postgresStore({
      pool: db.pool,
      tablePrefix,
      dedupeTtl: 50,
      orderingTtl: 50,
      logger: false,
    })
    // Three watermarks, one mark of an event without a conversion, one of a stale event.
    for (let i = 0; i < 3; i++) {
      const begun = await store.begin({ eventId: `evt_p${i}`, conversionId: i, order: 10 })
      if (begun.status === 'claimed') await store.commit(begun.claim)
    }
    const test = await store.begin({ eventId: 'evt_p_test', order: 1 })
    if (test.status === 'claimed') await store.commit(test.claim)
    // A stale event's mark (expiring after dedupeTtl) beside a watermark kept longer.
    const keeper = postgresStore({ pool: db.pool, tablePrefix, dedupeTtl: 50, logger: false })
    const kept = await keeper.begin({ eventId: 'evt_p_kept', conversionId: 99, order: 10 })
    if (kept.status === 'claimed') await keeper.commit(kept.claim)
    expect((await keeper.begin({ eventId: 'evt_p_old', conversionId: 99, order: 5 })).status).toBe(
      'stale',
    )
    await new Promise((resolve) => setTimeout(resolve, 100))
    // An expired watermark taken again by a claim still running: locked, skipped.
    const flying = await store.begin({ eventId: 'evt_p_new', conversionId: 0, order: 1 })
    expect(flying.status).toBe('claimed')
    expect(await store.prune()).toBe(4)
    if (flying.status === 'claimed') expect(await store.commit(flying.claim)).toBe(true)
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM ${tablePrefix}events`)
    expect(rows[0].n).toBe(0)
    const left = await db.pool.query(
      `SELECT event_id FROM ${tablePrefix}conversions ORDER BY conversion_id`,
    )
    expect(left.rows).toEqual([{ event_id: 'evt_p_new' }, { event_id: 'evt_p_kept' }])
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
    await db.pool.query(`DROP FUNCTION ${tablePrefix}held(bigint, text)`)
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
    expect(() => postgresStore(undefined as never)).toThrow(
      /`pool` \(node-postgres\) or `sql` \(postgres.js\) is required/,
    )
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

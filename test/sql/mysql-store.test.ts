import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { type BeginResult, type Claim, createReceiver } from '@affiliate-webhooks/core'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import {
  type MysqlEventStore,
  mysqlSchema,
  mysqlSchemaStatements,
  mysqlStore,
} from '@affiliate-webhooks/mysql'
import mysql, { type Pool } from 'mysql2/promise'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { storeContract } from '../stores/store-contract.js'
import {
  createMysqlTestDatabase,
  type MysqlTestDatabase,
  mysqlServerOf,
  type PrivateMariadb,
  startPrivateMariadb,
} from '../support/mysql-db.js'
import { sqlReceiverCases } from './sql-receiver-cases.js'
import { sqlStoreCases } from './sql-store-cases.js'

// Texts marked /* unseen */ pass the statement reader: how these tests send
// what a guard cannot see (a procedure that commits, say) and check that the
// commit still catches it.
vi.mock('@affiliate-webhooks/core/internal', async (importOriginal) => {
  const real = await importOriginal<typeof import('@affiliate-webhooks/core/internal')>()
  return {
    ...real,
    transactionControl: (text: string, dialect: 'postgres' | 'mysql' | 'sqlite') =>
      text.includes('/* unseen */') ? undefined : real.transactionControl(text, dialect),
  }
})

let db: MysqlTestDatabase
beforeAll(async () => {
  // Cases leave claims open (each holds a connection until its lease runs out).
  db = await createMysqlTestDatabase({ connectionLimit: 60 })
})
afterAll(async () => {
  await db?.drop()
})

/** A store's own tables for a case that asks for a prefix (the streak is one per table set). */
const tablePrefix = (prefix: string | undefined) =>
  prefix === undefined ? undefined : `${prefix.toLowerCase().replace(/[^a-z0-9_]/g, '_')}`

/** Runs a command with `input` on its stdin. */
const run = (command: string, args: string[], input: string) =>
  new Promise<void>((resolve, reject) => {
    const child = execFile(command, args, (error, _stdout, stderr) =>
      error ? reject(new Error(`${command} failed: ${stderr}`)) : resolve(),
    )
    child.stdin?.end(input)
  })

storeContract('mysqlStore', async ({ prefix, ...options }) => {
  const store = mysqlStore({
    pool: db.pool,
    tablePrefix: tablePrefix(prefix),
    logger: false,
    ...options,
  })
  await store.ready()
  return store
})

sqlStoreCases('mysqlStore', async (options) => {
  const store = mysqlStore({ pool: db.pool, logger: false, ...options })
  await store.ready()
  return store
})

/** The store contract again, on a pool of the test's own making. */
function contractOnPool(title: string, makePool: () => Pool, defaultPrefix: string): void {
  let pool: Pool
  beforeAll(() => {
    pool = makePool()
  })
  afterAll(async () => {
    await pool?.end()
  })
  storeContract(`mysqlStore (${title})`, async ({ prefix, ...options }) => {
    const store = mysqlStore({
      pool,
      tablePrefix: tablePrefix(prefix) ?? defaultPrefix,
      logger: false,
      ...options,
    })
    await store.ready()
    return store
  })
}

describe('on connections without autocommit', () => {
  // A pool whose sessions start with autocommit off (an init command some apps use):
  // every read opens a transaction, so a snapshot taken too early would see the past.
  contractOnPool(
    'autocommit off',
    () => {
      const noAutocommit = mysql.createPool({ uri: db.url, connectionLimit: 60 })
      const core = (
        noAutocommit as unknown as { pool: { on(e: string, f: (c: never) => void): void } }
      ).pool
      core.on('connection', (connection: { query(sql: string): void }) => {
        connection.query('SET SESSION autocommit = 0')
      })
      return noAutocommit
    },
    'aw_noac_',
  )
})

describe('on connections that count changed rows, not found rows', () => {
  // mysql2 asks for found rows by default, and ROW_COUNT() then counts an
  // upsert that changed nothing as 1, as an insert: the claim must tell its
  // outcomes apart either way.
  contractOnPool(
    'changed rows',
    () => mysql.createPool({ uri: db.url, connectionLimit: 60, flags: ['-FOUND_ROWS'] }),
    'aw_changed_',
  )
})

const SECRET = 'whsec_mysql_store_test'

async function delivery(event: object) {
  const signed = await signedDelivery({ secret: SECRET, event })
  return { headers: signed.headers, rawBody: new TextEncoder().encode(signed.body) }
}

const count = async (sql: string, values: unknown[] = []) => {
  const [rows] = await db.pool.query(sql, values)
  return Number((rows as { n: number }[])[0]?.n)
}

function claimedOf<Tx>(result: BeginResult<Tx>): Claim<Tx> {
  if (result.status !== 'claimed') throw new Error(`expected claimed, got ${result.status}`)
  return result.claim
}

sqlReceiverCases('mysqlStore', {
  store: (options) => mysqlStore({ pool: db.pool, logger: false, ...options }),
  query: (tx, sql, params) => tx.query(sql, params),
  exec: async (sql, params) => {
    await db.pool.query(sql, params)
  },
  count: (sql, params) => count(sql, params ?? []),
  ledgerDdl: (table) =>
    `CREATE TABLE ${table} (event_id VARCHAR(255) PRIMARY KEY, conversion_id BIGINT, commission DECIMAL(12,2)) ENGINE=InnoDB`,
  insertSql: (table) => `INSERT INTO ${table} VALUES (?, ?, ?)`,
  spoil: {
    title: 'ended the transaction itself past the guard (ROLLBACK on the underlying connection)',
    run: (tx) => pastTheGuard(tx, 'ROLLBACK'),
    status: 500,
    code: 'handler_failed',
  },
})

/** InnoDB's server-wide counters of row-lock waits and deadlocks. */
async function lockCounters(pool: Pool) {
  const [rows] = await pool.query(
    "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_row_lock_waits', 'Innodb_deadlocks')",
  )
  const value = (name: string) =>
    Number(
      (rows as { Variable_name: string; Value: string }[]).find((row) => row.Variable_name === name)
        ?.Value,
    )
  return { waits: value('Innodb_row_lock_waits'), deadlocks: value('Innodb_deadlocks') }
}

// The counters are server-wide, so this runs on a MariaDB of its own: every lock
// wait it counts is one between this test's transactions, whatever other files run.
describe('mysqlStore with a receiver: concurrent new conversions (a private MariaDB)', () => {
  let server: PrivateMariadb
  let pool: Pool
  beforeAll(async () => {
    server = await startPrivateMariadb()
    pool = mysql.createPool({ uri: server.url, connectionLimit: 40 })
  })
  afterAll(async () => {
    await pool?.end()
    await server?.dispose()
  })

  it('handles many concurrent deliveries of new conversions with no InnoDB row-lock wait or deadlock', async () => {
    const table = `ledger_${randomUUID().slice(0, 8)}`
    await pool.query(
      `CREATE TABLE ${table} (event_id VARCHAR(255) PRIMARY KEY, conversion_id BIGINT, commission DECIMAL(12,2)) ENGINE=InnoDB`,
    )
    const store = mysqlStore({ pool, logger: false })
    await store.ready()
    let running = 0
    let overlap = 0
    const receiver = createReceiver({
      secret: SECRET,
      logger: false,
      store,
      async onConversion(conversion, event, ctx) {
        running++
        overlap = Math.max(overlap, running)
        await ctx.tx.query(`INSERT INTO ${table} VALUES (?, ?, 1)`, [event.id, conversion.id])
        // Every transaction stays open a while, overlapping the others.
        await new Promise((resolve) => setTimeout(resolve, 20))
        running--
      },
    })
    const events = Array.from({ length: 120 }, (_, i) =>
      buildConversionEvent({ conversion: { id: 700_000 + ((i * 7919) % 120) } }),
    )
    const before = await lockCounters(pool)
    const outcomes: string[] = []
    for (let i = 0; i < events.length; i += 30) {
      const batch = events.slice(i, i + 30)
      const answers = await Promise.all(
        batch.map(async (event) => receiver.receive(await delivery(event))),
      )
      outcomes.push(...answers.map((answer) => answer.outcome ?? String(answer.status)))
    }
    const after = await lockCounters(pool)
    expect(outcomes.every((outcome) => outcome === 'processed')).toBe(true)
    const [rows] = await pool.query(`SELECT COUNT(*) AS n FROM ${table}`)
    expect(Number((rows as { n: number }[])[0]?.n)).toBe(events.length)
    // None of them waited for another's row lock, nor deadlocked.
    expect({
      waits: after.waits - before.waits,
      deadlocks: after.deadlocks - before.deadlocks,
    }).toEqual({
      waits: 0,
      deadlocks: 0,
    })
    // The transactions did run side by side (a run in turn would have no waits to count).
    expect(overlap).toBeGreaterThan(5)
  })
})

describe('mysqlStore with a receiver: locks and stuck processes', () => {
  const table = `ledger_${randomUUID().slice(0, 8)}`
  beforeAll(async () => {
    await db.pool.query(
      `CREATE TABLE ${table} (event_id VARCHAR(255) PRIMARY KEY, conversion_id BIGINT, commission DECIMAL(12,2)) ENGINE=InnoDB`,
    )
  })
  const effects = (eventId: string) =>
    count(`SELECT COUNT(*) AS n FROM ${table} WHERE event_id = ?`, [eventId])

  it('lets the server end the session of a process too stuck to run its timers: the event is freed, the late commit resolves false', async () => {
    const store = mysqlStore({ pool: db.pool, logger: false })
    const eventId = `evt_stuck_${randomUUID().slice(0, 8)}`
    const claim = claimedOf(
      await store.begin({ eventId, conversionId: 76, order: 1000, leaseMs: 1000 }),
    )
    await claim.tx?.query(`INSERT INTO ${table} VALUES (?, 76, 1)`, [eventId])
    // The event loop is blocked past the lease and the server's bound (lease + 1 s, in
    // whole seconds): only the server can end the transaction now.
    const until = Date.now() + 3500
    while (Date.now() < until) {
      // busy
    }
    // Called before the lease timer could run: the store learns of the end from the server.
    expect(await store.commit(claim)).toBe(false)
    expect(await effects(eventId)).toBe(0)
    const retry = claimedOf(await store.begin({ eventId, conversionId: 76, order: 1000 }))
    expect(await store.commit(retry)).toBe(true)
  })
})

/**
 * A statement the guard does not see at all: mysql2's own query method, taken
 * from the callback connection's class and called on it, so neither the
 * reader (the text is marked for the mocked reader above too) nor the status
 * checks run. What is tested is the store's commit check alone, after a
 * deadlock too (the autocommit-off path).
 */
function pastTheGuard(tx: unknown, sql: string): Promise<void> {
  const { connection } = tx as { connection: object }
  const query = Reflect.get(Object.getPrototypeOf(connection), 'query') as (
    this: object,
    sql: string,
    cb: (e: unknown) => void,
  ) => void
  return new Promise((resolve, reject) => {
    query.call(connection, `/* unseen */ ${sql}`, (error) => (error ? reject(error) : resolve()))
  })
}

describe('mysqlStore sentinels: a transaction ended under the handler never commits', () => {
  // Both kinds of the claim's sentinel: the new watermark (an event with a
  // conversion) and the events row (an event without one).
  const cases = [
    { title: 'with a conversion', conversionId: 880_001 },
    { title: 'without a conversion', conversionId: undefined },
  ]
  for (const { title, conversionId } of cases) {
    it(`${title}: ROLLBACK, or ROLLBACK and a new transaction, past the guard, is the handler's failure and marks nothing`, async () => {
      const store = mysqlStore({ pool: db.pool, logger: false })
      const eventId = `evt_sentinel_${randomUUID().slice(0, 8)}`
      const order = Date.now()
      for (const after of ['ROLLBACK', 'START TRANSACTION']) {
        const claim = claimedOf(await store.begin({ eventId, conversionId, order }))
        await pastTheGuard(claim.tx, 'ROLLBACK')
        if (after !== 'ROLLBACK') await pastTheGuard(claim.tx, after)
        await expect(store.commit(claim)).rejects.toMatchObject({ code: 'handler_failed' })
        expect(await store.peek({ eventId, conversionId, order })).toBe('unsettled')
      }
      const retry = claimedOf(await store.begin({ eventId, conversionId, order }))
      expect(await store.commit(retry)).toBe(true)
      expect((await store.begin({ eventId, conversionId, order })).status).toBe('duplicate')
    })
  }

  it("a deadlock that rolled back the handler's transaction (the handler caught it) is the handler's failure: later statements refused, nothing marked, nothing written after it kept", async () => {
    const store = mysqlStore({ pool: db.pool, logger: false })
    const table = `aw_deadlock_${randomUUID().slice(0, 6)}`
    await db.pool.query(`CREATE TABLE ${table} (id INT PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB`)
    await db.pool.query(`INSERT INTO ${table} VALUES (1, 0), (2, 0)`)
    const other = await db.pool.getConnection()
    try {
      const eventId = `evt_deadlock_${randomUUID().slice(0, 8)}`
      const input = { eventId, conversionId: 880_003, order: Date.now() }
      const claim = claimedOf(await store.begin(input))
      const tx = claim.tx as unknown as mysql.PoolConnection
      await other.query('START TRANSACTION')
      // The other transaction writes more rows, so InnoDB rolls back the handler's.
      await other.query(`INSERT INTO ${table} SELECT seq, 0 FROM seq_10_to_60`)
      await other.query(`UPDATE ${table} SET v = 1 WHERE id = 1`)
      await tx.query(`UPDATE ${table} SET v = 1 WHERE id = 2`)
      const caught = tx.query(`UPDATE ${table} SET v = 2 WHERE id = 1`).then(
        () => undefined,
        (error: { errno?: number }) => error.errno,
      )
      await other.query(`UPDATE ${table} SET v = 2 WHERE id = 2`)
      expect(await caught).toBe(1213)
      await other.query('COMMIT')
      // The handler retries its statement, as MySQL's docs advise: refused at once.
      await expect(tx.query(`UPDATE ${table} SET v = 3 WHERE id = 2`)).rejects.toMatchObject({
        code: 'ERR_AW_TX_GONE',
      })
      // A write that goes around the guard runs with autocommit off: the commit's check rolls it back.
      await pastTheGuard(tx, `INSERT INTO ${table} VALUES (99, 9)`)
      await expect(store.commit(claim)).rejects.toMatchObject({ code: 'handler_failed' })
      expect(await store.peek(input)).toBe('unsettled')
      expect(await count(`SELECT COUNT(*) AS n FROM ${table} WHERE v = 2`)).toBe(1)
      expect(await count(`SELECT COUNT(*) AS n FROM ${table} WHERE id = 99`)).toBe(0)
      // The connection went back to the pool with autocommit on again.
      const [rows] = await db.pool.query('SELECT @@SESSION.autocommit AS a')
      expect((rows as { a: number }[])[0]?.a).toBe(1)
    } finally {
      other.release()
      await db.pool.query(`DROP TABLE ${table}`)
    }
  })

  it('is not fooled by an expired watermark of the same order left from before', async () => {
    const store = mysqlStore({ pool: db.pool, logger: false, orderingTtl: 50, dedupeTtl: 50 })
    const conversionId = 880_002
    const first = claimedOf(await store.begin({ eventId: 'evt_expired_a', conversionId, order: 7 }))
    expect(await store.commit(first)).toBe(true)
    await new Promise((resolve) => setTimeout(resolve, 120))
    // The watermark 7 is still in the table but expired: order 7 is new again.
    const claim = claimedOf(await store.begin({ eventId: 'evt_expired_b', conversionId, order: 7 }))
    await pastTheGuard(claim.tx, 'ROLLBACK')
    await expect(store.commit(claim)).rejects.toMatchObject({ code: 'handler_failed' })
  })
})

describe('mysqlStore tables', () => {
  it('creates its tables once when several stores start together', async () => {
    const tablePrefix = `aw_race_${randomUUID().slice(0, 6)}_`
    const stores = Array.from({ length: 6 }, () =>
      mysqlStore({ pool: db.pool, tablePrefix, logger: false }),
    )
    await Promise.all(stores.map((store) => store.ready()))
    expect(await count(`SELECT COUNT(*) AS n FROM ${tablePrefix}schema`)).toBe(1)
    const [first, second] = stores as [MysqlEventStore, MysqlEventStore]
    const claim = claimedOf(await first.begin({ eventId: 'evt_race', order: 1 }))
    expect(await second.begin({ eventId: 'evt_race', order: 1 })).toEqual({
      status: 'in_progress',
    })
    expect(await first.commit(claim)).toBe(true)
  })

  it('puts back a procedure that went missing (a partial migration) on the next start', async () => {
    const tablePrefix = `aw_gone_${randomUUID().slice(0, 6)}_`
    await mysqlStore({ pool: db.pool, tablePrefix, logger: false }).ready()
    await db.pool.query(`DROP PROCEDURE \`${tablePrefix}commit_v3\``)
    const store = mysqlStore({ pool: db.pool, tablePrefix, logger: false })
    await store.ready()
    expect(
      await store.commit(claimedOf(await store.begin({ eventId: 'evt_gone', order: 1 }))),
    ).toBe(true)
  })

  it('refuses tables of another layout version with an error that says what to do', async () => {
    const tablePrefix = `aw_old_${randomUUID().slice(0, 6)}_`
    await db.pool.query(`CREATE TABLE ${tablePrefix}schema (version INT NOT NULL PRIMARY KEY)`)
    await db.pool.query(`INSERT INTO ${tablePrefix}schema VALUES (0)`)
    const store = mysqlStore({ pool: db.pool, tablePrefix, logger: false })
    await expect(store.ready()).rejects.toThrow(/version 0.*needs 3.*sql schema --mysql/s)
    await expect(store.begin({ eventId: 'evt_old', order: 1 })).rejects.toThrow(/version 0/)
    // Nothing else was created beside the old table.
    expect(
      await count(
        'SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_schema = ? AND table_name LIKE ?',
        [db.database, `${tablePrefix}%`],
      ),
    ).toBe(1)
  })

  it('gives the same DDL as statements a driver runs one at a time (twice: no change)', async () => {
    const tablePrefix = `aw_stm_${randomUUID().slice(0, 6)}_`
    const statements = mysqlSchemaStatements({ tablePrefix })
    expect(statements.join('\n')).not.toContain('DELIMITER')
    for (let i = 0; i < 2; i++) for (const sql of statements) await db.pool.query(sql)
    const store = mysqlStore({ pool: db.pool, tablePrefix, logger: false })
    await store.ready()
    expect(await store.commit(claimedOf(await store.begin({ eventId: 'evt_stm', order: 1 })))).toBe(
      true,
    )
  })

  it('refuses store tables without a version row that lack its columns (an older version made them)', async () => {
    const tablePrefix = `aw_pre_${randomUUID().slice(0, 6)}_`
    await db.pool.query(
      `CREATE TABLE ${tablePrefix}events (event_id VARBINARY(255) PRIMARY KEY, done_at BIGINT) ENGINE=InnoDB`,
    )
    const store = mysqlStore({ pool: db.pool, tablePrefix, logger: false })
    await expect(store.ready()).rejects.toThrow(
      new RegExp(`${tablePrefix}events exists.*lacks the column\\(s\\) expires_at.*older version`),
    )
    // No version row stamped: the next start refuses again.
    expect(await count(`SELECT COUNT(*) AS n FROM ${tablePrefix}schema`)).toBe(0)
  })

  it('accepts tables with every column but no version row (a setup that stopped half-way)', async () => {
    const tablePrefix = `aw_half_${randomUUID().slice(0, 6)}_`
    await db.pool.query(
      `CREATE TABLE ${tablePrefix}events (event_id VARBINARY(255) PRIMARY KEY, expires_at BIGINT NULL) ENGINE=InnoDB`,
    )
    const store = mysqlStore({ pool: db.pool, tablePrefix, logger: false })
    await store.ready()
    expect(
      await store.commit(claimedOf(await store.begin({ eventId: 'evt_half', order: 1 }))),
    ).toBe(true)
  })

  it('refuses a missing pool and a callback pool of mysql2 with a TypeError saying what to pass', async () => {
    expect(() => mysqlStore(undefined as never)).toThrow(/`pool` is required/)
    const callbacks = (await import('mysql2')).createPool({ uri: db.url })
    expect(() => mysqlStore({ pool: callbacks as never })).toThrow(/callback pool.*mysql2\/promise/)
    await new Promise((resolve) => callbacks.end(resolve))
  })

  it('prints the DDL it runs, and the mysql client makes tables the store accepts (twice: no change)', async () => {
    const tablePrefix = `aw_ddl_${randomUUID().slice(0, 6)}_`
    const ddl = mysqlSchema({ tablePrefix })
    expect(ddl).toContain(`CREATE TABLE IF NOT EXISTS \`${tablePrefix}events\``)
    for (let i = 0; i < 2; i++) {
      await run('mariadb', ['-h', '127.0.0.1', '-u', 'root', db.database], ddl)
    }
    const store = mysqlStore({ pool: db.pool, tablePrefix, logger: false })
    await store.ready()
    const claim = claimedOf(await store.begin({ eventId: 'evt_ddl', conversionId: 1, order: 1 }))
    expect(await store.commit(claim)).toBe(true)
    expect(await store.peek({ eventId: 'evt_other', conversionId: 1, order: 1 })).toBe('stale')
  })

  it('prunes expired marks and watermarks, and never a claim in flight', async () => {
    const tablePrefix = `aw_prune_${randomUUID().slice(0, 6)}_`
    const store = mysqlStore({
      pool: db.pool,
      tablePrefix,
      dedupeTtl: 50,
      orderingTtl: 50,
      logger: false,
    })
    // Three watermarks, one mark of an event without a conversion, one of a stale event.
    for (let i = 0; i < 3; i++) {
      await store.commit(
        claimedOf(await store.begin({ eventId: `evt_p${i}`, conversionId: i, order: 10 })),
      )
    }
    await store.commit(claimedOf(await store.begin({ eventId: 'evt_p_test', order: 1 })))
    // A stale event's mark (expiring after dedupeTtl) beside a watermark kept longer.
    const keeper = mysqlStore({ pool: db.pool, tablePrefix, dedupeTtl: 50, logger: false })
    await keeper.commit(
      claimedOf(await keeper.begin({ eventId: 'evt_p_kept', conversionId: 99, order: 10 })),
    )
    expect((await keeper.begin({ eventId: 'evt_p_old', conversionId: 99, order: 5 })).status).toBe(
      'stale',
    )
    // A claim in flight (its row expires after the default dedupeTtl, 72 h).
    const live = mysqlStore({ pool: db.pool, tablePrefix, logger: false })
    const flying = claimedOf(await live.begin({ eventId: 'evt_flying', order: 10 }))
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(await store.prune()).toBe(5)
    // The claim in flight has not committed its row: nothing else is left.
    expect(await count(`SELECT COUNT(*) AS n FROM ${tablePrefix}events`)).toBe(0)
    expect(await count(`SELECT COUNT(*) AS n FROM ${tablePrefix}conversions`)).toBe(1)
    expect(await live.commit(flying)).toBe(true)
    expect((await live.begin({ eventId: 'evt_flying', order: 10 })).status).toBe('duplicate')
  })

  it('refuses layout-1 tables naming the upgrade; the upgrade it names keeps every watermark', async () => {
    const tablePrefix = `aw_one_${randomUUID().slice(0, 6)}_`
    // Layout 1 as version 1 of this package left it: a mark per event, a watermark per conversion.
    for (const sql of [
      `CREATE TABLE ${tablePrefix}schema (version INT NOT NULL PRIMARY KEY) ENGINE=InnoDB`,
      `INSERT INTO ${tablePrefix}schema VALUES (1)`,
      `CREATE TABLE ${tablePrefix}events (event_id VARBINARY(255) NOT NULL PRIMARY KEY, expires_at BIGINT NULL) ENGINE=InnoDB`,
      `CREATE TABLE ${tablePrefix}conversions (conversion_id BIGINT NOT NULL PRIMARY KEY, watermark BIGINT NOT NULL, expires_at BIGINT NOT NULL) ENGINE=InnoDB`,
      `CREATE TABLE ${tablePrefix}streak (name VARCHAR(32) NOT NULL PRIMARY KEY, failures INT NOT NULL, codes VARCHAR(1024) NOT NULL, expires_at BIGINT NOT NULL) ENGINE=InnoDB`,
      `INSERT INTO ${tablePrefix}events VALUES ('evt_one_done', 99999999999999)`,
      `INSERT INTO ${tablePrefix}conversions VALUES (4100, 5000, 99999999999999)`,
    ]) {
      await db.pool.query(sql)
    }
    const store = mysqlStore({ pool: db.pool, tablePrefix, logger: false })
    const refused = await store.ready().then(
      () => undefined,
      (error: Error) => error.message,
    )
    expect(refused).toMatch(
      /layout version 1 .*needs layout 3.*Stop every process of the older version, then upgrade in place/,
    )
    expect(refused).toMatch(/or drop the tables/i)
    // The statements it names, run one by one as they are: the store then starts on layout 3.
    const upgrade = /upgrade in place, keeping every watermark: (.*;) The next start/.exec(
      refused ?? '',
    )?.[1]
    expect(upgrade).toContain(`ALTER TABLE ${tablePrefix}conversions ADD COLUMN`)
    for (const sql of (upgrade as string).split(/;\s*/).filter(Boolean)) await db.pool.query(sql)
    const again = mysqlStore({ pool: db.pool, tablePrefix, logger: false })
    await again.ready()
    expect(await count(`SELECT MAX(version) AS n FROM ${tablePrefix}schema`)).toBe(3)
    // The layout-1 watermark and mark still decide.
    expect(
      (await again.begin({ eventId: 'evt_one_older', conversionId: 4100, order: 4000 })).status,
    ).toBe('stale')
    expect(
      (await again.begin({ eventId: 'evt_one_done', conversionId: 4100, order: 5000 })).status,
    ).toBe('duplicate')
    const newer = claimedOf(
      await again.begin({ eventId: 'evt_one_newer', conversionId: 4100, order: 6000 }),
    )
    expect(await again.commit(newer)).toBe(true)
  })

  it('keys event ids longer than the column by their hash, apart from each other', async () => {
    const store = mysqlStore({ pool: db.pool, logger: false })
    const long = `evt_${'x'.repeat(400)}`
    await store.commit(claimedOf(await store.begin({ eventId: `${long}a`, order: 1 })))
    expect((await store.begin({ eventId: `${long}a`, order: 1 })).status).toBe('duplicate')
    expect(await store.peek({ eventId: `${long}a`, order: 1 })).toBe('duplicate')
    const other = claimedOf(await store.begin({ eventId: `${long}b`, order: 1 }))
    await store.release(other)
  })

  it('names the database and the setting, never the password, when the pool cannot connect', async () => {
    const pool = mysql.createPool('mysql://app:hunter2-secret@127.0.0.1:1/ledger')
    const store = mysqlStore({ pool, logger: false })
    const error = await store.ready().then(
      () => undefined,
      (e: Error) => e,
    )
    expect(error?.message).toMatch(/MySQL at 127\.0\.0\.1:1\/ledger as user app/)
    expect(error?.message).toMatch(/host, port, database/)
    expect(error?.message).not.toContain('hunter2')
    await pool.end()
  })

  it('names the setting when the user or password is wrong, never the password', async () => {
    const { host, port } = mysqlServerOf()
    const pool = mysql.createPool({
      host,
      port,
      user: 'nobody_aw',
      password: 'hunter2-secret',
      database: db.database,
    })
    const logged: string[] = []
    const store = mysqlStore({
      pool,
      logger: { error: (m: string) => logged.push(m), warn: () => {} },
    })
    const error = await store.begin({ eventId: 'evt_denied', order: 1 }).then(
      () => undefined,
      (e: Error) => e,
    )
    expect(error?.message).toMatch(/as user nobody_aw.*user and password/s)
    expect(`${error?.message}${logged.join('')}`).not.toContain('hunter2')
    await pool.end()
  })
})

/** The pool, counting every statement sent through it or a connection taken from it. */
function countingPool(pool: Pool) {
  const counter = { trips: 0 }
  const counted = <T extends object>(target: T, methods: string[]): T =>
    new Proxy(target, {
      get(object, property) {
        const value = Reflect.get(object, property, object)
        if (typeof value !== 'function') return value
        if (methods.includes(String(property))) {
          return (...args: unknown[]) => {
            counter.trips++
            return value.apply(object, args)
          }
        }
        if (property === 'getConnection') {
          return async () => counted(await value.apply(object, []), ['query', 'execute'])
        }
        return value.bind(object)
      },
    })
  return { pool: counted(pool, ['query', 'execute']), counter }
}

describe('mysqlStore round trips', () => {
  it('costs two round trips of its own per delivery (CALL begin, CALL commit), none per pool checkout', async () => {
    const { pool, counter } = countingPool(db.pool)
    const store = mysqlStore({ pool, logger: false })
    await store.ready()
    const deliveries = 50
    counter.trips = 0
    for (let i = 0; i < deliveries; i++) {
      const eventId = `evt_trips_${randomUUID()}`
      const claim = claimedOf(await store.begin({ eventId, conversionId: 5000 + i, order: 10 }))
      expect(await store.commit(claim)).toBe(true)
    }
    expect(counter.trips / deliveries).toBe(2)
    // A duplicate is one.
    counter.trips = 0
    const eventId = `evt_trips_${randomUUID()}`
    await store.commit(claimedOf(await store.begin({ eventId, order: 1 })))
    counter.trips = 0
    expect((await store.begin({ eventId, order: 1 })).status).toBe('duplicate')
    expect(counter.trips).toBe(1)
  })

  it('stays within four per delivery through a receiver (its failure-streak reset included)', async () => {
    const { pool, counter } = countingPool(db.pool)
    const store = mysqlStore({ pool, logger: false })
    await store.ready()
    const receiver = createReceiver({ secret: SECRET, store, onConversion() {} })
    const deliveries = 40
    counter.trips = 0
    for (let i = 0; i < deliveries; i++) {
      const event = buildConversionEvent({ conversion: { id: 6000 + i } })
      expect((await receiver.receive(await delivery(event))).outcome).toBe('processed')
    }
    expect(counter.trips / deliveries).toBeLessThanOrEqual(4)
    expect(counter.trips).toBeGreaterThanOrEqual(2 * deliveries)
  })
})

describe('mysqlStore when its server goes away (a private MariaDB)', () => {
  let server: PrivateMariadb
  beforeAll(async () => {
    server = await startPrivateMariadb()
  })
  afterAll(async () => {
    await server?.dispose()
  })

  it('fails fast and clearly while the server is down, an open claim included, and recovers after restart', async () => {
    const pool = mysql.createPool({ uri: server.url, connectionLimit: 5 })
    const store = mysqlStore({ pool, logger: false, acquireTimeoutMs: 1000 })
    await store.ready()
    const open = claimedOf(await store.begin({ eventId: 'evt_outage_open', order: 1 }))
    await server.kill()
    // A genuine outage is not a lost lease: the commit throws (503), it does not resolve false.
    await expect(store.commit(open)).rejects.toThrow(/MySQL at 127\.0\.0\.1:\d+\/aw as user root/)
    const started = performance.now()
    const failure = await store.begin({ eventId: 'evt_outage', order: 1 }).then(
      () => undefined,
      (error: Error) => error,
    )
    expect(performance.now() - started).toBeLessThan(5000)
    expect(failure?.message).toMatch(new RegExp(`MySQL at 127\\.0\\.0\\.1:${server.port}/aw`))
    await server.restart()
    // The open claim's transaction died with the server: the event is free again.
    const again = claimedOf(await store.begin({ eventId: 'evt_outage_open', order: 1 }))
    expect(await store.commit(again)).toBe(true)
    expect(
      await store.commit(claimedOf(await store.begin({ eventId: 'evt_outage', order: 1 }))),
    ).toBe(true)
    await pool.end()
  })

  it('answers within the bound while the server hangs (frozen), then recovers', async () => {
    const pool = mysql.createPool({ uri: server.url, connectionLimit: 5 })
    const store = mysqlStore({ pool, logger: false, acquireTimeoutMs: 1000 })
    await store.commit(claimedOf(await store.begin({ eventId: 'evt_frozen_warm', order: 1 })))
    await server.freeze()
    try {
      const started = performance.now()
      // A pooled connection: the statement's own bound (5 s) ends the wait, inside the service's 10 s.
      await expect(store.begin({ eventId: 'evt_frozen', order: 1 })).rejects.toThrow(/MySQL at/)
      expect(performance.now() - started).toBeLessThan(8000)
    } finally {
      await server.thaw()
    }
    expect(
      await store.commit(claimedOf(await store.begin({ eventId: 'evt_frozen', order: 1 }))),
    ).toBe(true)
    await pool.end()
  })
})

describe('mysqlStore ctx.tx guard', () => {
  it('refuses what would commit the claim or hand its connection away, through every way mysql2 sends, before it reaches the server', async () => {
    const store = mysqlStore({ pool: db.pool, logger: false })
    const input = {
      eventId: `evt_guard_${randomUUID().slice(0, 8)}`,
      conversionId: 880_010,
      order: Date.now(),
    }
    const claim = claimedOf(await store.begin(input))
    const tx = claim.tx as unknown as mysql.PoolConnection
    const refused = { code: 'ERR_AW_TX_CONTROL' }
    await expect(tx.query('START TRANSACTION')).rejects.toMatchObject(refused)
    await expect(tx.query({ sql: 'LOCK TABLES aw_conversions WRITE' })).rejects.toMatchObject(
      refused,
    )
    await expect(
      tx.execute('CREATE TABLE IF NOT EXISTS aw_guard_x (id INT)'),
    ).rejects.toMatchObject(refused)
    await expect(tx.prepare('SET autocommit = 1')).rejects.toMatchObject(refused)
    await expect(tx.beginTransaction()).rejects.toMatchObject(refused)
    await expect(tx.commit()).rejects.toMatchObject(refused)
    await expect(tx.rollback()).rejects.toMatchObject(refused)
    expect(() => tx.release()).toThrow(/ctx\.tx refused ctx\.tx\.release\(\)/)
    // The callback connection under it: the same refusals, to the callback.
    const raw = tx.connection as unknown as {
      query(sql: string, cb: (error: unknown) => void): void
      beginTransaction(cb: (error: unknown) => void): void
      promise(): unknown
    }
    const viaCallback = (send: (cb: (error: unknown) => void) => void) =>
      new Promise((resolve) => send(resolve))
    expect(
      await viaCallback((cb) => raw.query('CREATE TABLE IF NOT EXISTS aw_guard_y (id INT)', cb)),
    ).toMatchObject(refused)
    expect(await viaCallback((cb) => raw.beginTransaction(cb))).toMatchObject(refused)
    expect(() => raw.promise()).toThrow(/use ctx\.tx itself/)
    expect(await viaCallback((cb) => raw.query('SELECT 1', cb))).toBeNull()
    await expect(tx.end()).rejects.toMatchObject(refused)
    await expect(tx.changeUser({ user: 'root' })).rejects.toMatchObject(refused)
    expect(() => tx.destroy()).toThrow(/ctx\.tx refused ctx\.tx\.destroy\(\)/)
    // What may go does, prepared statements included, and the claim still commits.
    const prepared = await tx.prepare('SELECT ? AS n')
    expect((await prepared.execute([7]))[0]).toEqual([{ n: 7 }])
    await tx.query('CREATE TEMPORARY TABLE aw_guard_tmp (id INT)')
    expect(await store.commit(claim)).toBe(true)
    expect((await store.begin(input)).status).toBe('duplicate')
    // Settled: nothing more goes through ctx.tx, prepared statements neither.
    await expect(tx.query('SELECT 1')).rejects.toMatchObject({ code: 'ERR_AW_TX_OVER' })
    await expect(prepared.execute([1])).rejects.toMatchObject({ code: 'ERR_AW_TX_OVER' })
  })
})

describe('mysqlStore commit and release while a statement of the handler still runs', () => {
  // A handler that returns (or throws) without awaiting a statement it sent on
  // ctx.tx: here one waiting for a row lock another session holds. mysql2 sends
  // the store's CALL after it, and its own timeout only starts then.
  it('give up within the store statement bound, answer the handler 500, keep nothing and free the event at once', async () => {
    const store = mysqlStore({ pool: db.pool, logger: false })
    const table = `aw_inflight_${randomUUID().slice(0, 6)}`
    await db.pool.query(`CREATE TABLE ${table} (id INT PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB`)
    await db.pool.query(`INSERT INTO ${table} VALUES (1, 0), (2, 0)`)
    const other = await db.pool.getConnection()
    try {
      await other.query('START TRANSACTION')
      await other.query(`UPDATE ${table} SET v = 9 WHERE id IN (1, 2)`)
      const inputs = [1, 2].map((id) => ({
        eventId: `evt_inflight_${id}_${randomUUID().slice(0, 8)}`,
        conversionId: 880_020 + id,
        order: Date.now(),
      }))
      const claims = await Promise.all(
        inputs.map(async (input) => claimedOf(await store.begin(input))),
      )
      claims.forEach((claim, i) => {
        const tx = claim.tx as unknown as mysql.PoolConnection
        // Not awaited: still waiting for the lock when the store settles.
        tx.query(`UPDATE ${table} SET v = 1 WHERE id = ${i + 1}`).catch(() => {})
      })
      const started = performance.now()
      const [committed, released] = await Promise.allSettled([
        store.commit(claims[0] as Claim<mysql.PoolConnection>),
        store.release(claims[1] as Claim<mysql.PoolConnection>),
      ])
      // The store's bound is 5 s; the lock wait would be 50 s (innodb_lock_wait_timeout).
      expect(performance.now() - started).toBeLessThan(15_000)
      expect(committed).toMatchObject({
        status: 'rejected',
        reason: { code: 'handler_failed', message: expect.stringMatching(/await/) },
      })
      expect(released.status).toBe('fulfilled')
      // Both sessions are gone, their locks with them: the events are free again
      // (within lockWaitMs, 2 s: else in_progress).
      for (const input of inputs) {
        expect(await store.peek(input)).toBe('unsettled')
        const retry = claimedOf(await store.begin(input))
        expect(await store.commit(retry)).toBe(true)
      }
      await other.query('COMMIT')
      expect(await count(`SELECT COUNT(*) AS n FROM ${table} WHERE v = 1`)).toBe(0)
    } finally {
      other.release()
      await db.pool.query(`DROP TABLE ${table}`)
    }
  }, 40_000)

  it("end at the lease's end too, when the handler never settles: the session is ended, the event free again", async () => {
    const store = mysqlStore({ pool: db.pool, logger: false })
    const table = `aw_inflight_${randomUUID().slice(0, 6)}`
    await db.pool.query(`CREATE TABLE ${table} (id INT PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB`)
    await db.pool.query(`INSERT INTO ${table} VALUES (1, 0)`)
    const other = await db.pool.getConnection()
    try {
      await other.query('START TRANSACTION')
      await other.query(`UPDATE ${table} SET v = 9 WHERE id = 1`)
      const input = {
        eventId: `evt_inflight_lease_${randomUUID().slice(0, 8)}`,
        conversionId: 880_023,
        order: Date.now(),
      }
      const claim = claimedOf(await store.begin({ ...input, leaseMs: 800 }))
      const tx = claim.tx as unknown as mysql.PoolConnection
      // Waits for the lock, 50 s; the handler never settles.
      tx.query(`UPDATE ${table} SET v = 1 WHERE id = 1`).catch(() => {})
      await vi.waitFor(
        async () => {
          const retry = await store.begin(input)
          expect(retry.status).toBe('claimed')
          if (retry.status === 'claimed') expect(await store.commit(retry.claim)).toBe(true)
        },
        { timeout: 10_000, interval: 200 },
      )
      await other.query('COMMIT')
      expect(await count(`SELECT COUNT(*) AS n FROM ${table} WHERE v = 1`)).toBe(0)
    } finally {
      other.release()
      await db.pool.query(`DROP TABLE ${table}`)
    }
  }, 40_000)
})

// innodb_rollback_on_timeout is a startup option: a MariaDB of its own runs with it.
describe('mysqlStore on a server that rolls back on a lock wait timeout (a private MariaDB)', () => {
  let server: PrivateMariadb
  let pool: Pool
  beforeAll(async () => {
    server = await startPrivateMariadb(['--innodb-rollback-on-timeout=ON'])
    pool = mysql.createPool({ uri: server.url, connectionLimit: 10 })
  })
  afterAll(async () => {
    await pool?.end()
    await server?.dispose()
  })

  it('refuses every statement after a caught 1205 (the whole transaction was rolled back), answers 500 and keeps nothing; the retry applies it once', async () => {
    await pool.query('CREATE TABLE hot (id INT PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB')
    await pool.query('CREATE TABLE ledger (event_id VARCHAR(64), step VARCHAR(16)) ENGINE=InnoDB')
    await pool.query('INSERT INTO hot VALUES (1, 0)')
    const other = await pool.getConnection()
    await other.query('START TRANSACTION')
    await other.query('UPDATE hot SET v = 9 WHERE id = 1')
    let attempt = 0
    let timedOut: unknown
    let retried: unknown
    const receiver = createReceiver({
      secret: SECRET,
      logger: false,
      store: mysqlStore({ pool, logger: false }),
      async onConversion(_conversion, event, ctx) {
        attempt++
        const step = (name: string) =>
          ctx.tx.query('INSERT INTO ledger VALUES (?, ?)', [event.id, `${attempt}:${name}`])
        await step('before')
        if (attempt === 1) {
          await ctx.tx.query('SET SESSION innodb_lock_wait_timeout = 1')
          timedOut = await ctx.tx.query('UPDATE hot SET v = 1 WHERE id = 1').then(
            () => undefined,
            (error: { errno?: number }) => error.errno,
          )
          // The common pattern: catch it, do the work again, go on.
          retried = await step('retry').catch((error: { code?: string }) => error.code)
        }
        await step('after').catch(() => {})
      },
    })
    const event = buildConversionEvent()
    const first = await receiver.receive(await delivery(event))
    expect([first.status, first.error?.code]).toEqual([500, 'handler_failed'])
    expect([timedOut, retried]).toEqual([1205, 'ERR_AW_TX_GONE'])
    const steps = async () => {
      const [rows] = await pool.query('SELECT step FROM ledger WHERE event_id = ? ORDER BY step', [
        event.id,
      ])
      return (rows as { step: string }[]).map((row) => row.step)
    }
    expect(await steps()).toEqual([])
    await other.query('COMMIT')
    other.release()
    expect((await receiver.receive(await delivery(event))).outcome).toBe('processed')
    expect((await receiver.receive(await delivery(event))).outcome).toBe('duplicate')
    expect(await steps()).toEqual(['2:after', '2:before'])
  })
})

/** Ways a handler could start, split or end a transaction on ctx.tx with mysql2: each commits the claim first. */
const TRANSACTION_STARTS: { title: string; run: (tx: mysql.PoolConnection) => Promise<unknown> }[] =
  [
    { title: 'START TRANSACTION', run: (tx) => tx.query('START TRANSACTION') },
    { title: 'BEGIN (execute)', run: (tx) => tx.execute('BEGIN') },
    { title: 'beginTransaction()', run: (tx) => tx.beginTransaction() },
    { title: 'SET autocommit = 1', run: (tx) => tx.query({ sql: 'SET autocommit = 1' }) },
    { title: 'LOCK TABLES', run: (tx) => tx.query('LOCK TABLES aw_conversions READ') },
    { title: 'changeUser()', run: (tx) => tx.changeUser({ user: 'root' }) },
  ]

describe('mysqlStore: a handler that starts a transaction on ctx.tx (issue 52, item 3, as reported)', () => {
  const table = `ledger_${randomUUID().slice(0, 8)}`
  beforeAll(async () => {
    await db.pool.query(
      `CREATE TABLE ${table} (event_id VARCHAR(255), attempt INT, step VARCHAR(16)) ENGINE=InnoDB`,
    )
  })
  const stepsOf = async (eventId: string) => {
    const [rows] = await db.pool.query(
      `SELECT attempt, step FROM ${table} WHERE event_id = ? ORDER BY attempt, step`,
      [eventId],
    )
    return (rows as { attempt: number; step: string }[]).map((r) => `${r.attempt}:${r.step}`)
  }
  const send = async (event: object, attempt: number) => {
    const signed = await signedDelivery({ secret: SECRET, event, attempt })
    return { headers: signed.headers, rawBody: new TextEncoder().encode(signed.body) }
  }

  for (const { title, run } of TRANSACTION_STARTS) {
    it(`${title}: refused at once; while the handler still runs a newer event of its conversion and a copy get 409, nothing of it is committed early; thrown, it is 500 and the retry applies it once`, async () => {
      let release!: () => void
      const held = new Promise<void>((resolve) => {
        release = resolve
      })
      let entered!: (error: unknown) => void
      const inside = new Promise<unknown>((resolve) => {
        entered = resolve
      })
      const conversion = { id: 6_000_000 + Math.floor(Math.random() * 1e6) }
      const older = buildConversionEvent({ createdAt: 1_000, conversion })
      const newer = buildConversionEvent({
        type: 'conversion.updated',
        createdAt: 2_000,
        conversion,
      })
      const thrown = buildConversionEvent()
      const attempts = new Map<string, number>()
      const receiver = createReceiver({
        secret: SECRET,
        logger: false,
        store: mysqlStore({ pool: db.pool, logger: false, lockWaitMs: 300 }),
        async onConversion(_conversion, event, ctx) {
          const attempt = (attempts.get(event.id) ?? 0) + 1
          attempts.set(event.id, attempt)
          const step = (name: string) =>
            ctx.tx.query(`INSERT INTO ${table} VALUES (?, ?, ?)`, [event.id, attempt, name])
          await step('before')
          const tx = ctx.tx as unknown as mysql.PoolConnection
          if (event.id === thrown.id && attempt === 1) await run(tx)
          if (event.id === older.id) {
            entered(
              await run(tx).then(
                () => undefined,
                (error: unknown) => error,
              ),
            )
            await held
          }
          await step('after')
        },
      })
      const running = receiver.receive(await send(older, 1))
      try {
        const started = performance.now()
        const error = (await inside) as (Error & { code?: string }) | undefined
        expect(performance.now() - started).toBeLessThan(1000)
        expect(error?.code, error?.message).toBe('ERR_AW_TX_CONTROL')
        expect(error?.message).toMatch(/Let the store commit/)
        const blocked = await receiver.receive(await send(newer, 1))
        expect([blocked.status, blocked.error?.code]).toEqual([409, 'event_in_progress'])
        const copy = await receiver.receive(await send(older, 2))
        expect([copy.status, copy.error?.code]).toEqual([409, 'event_in_progress'])
        expect(await stepsOf(older.id)).toEqual([])
      } finally {
        release()
      }
      expect((await running).outcome).toBe('processed')
      expect((await receiver.receive(await send(newer, 2))).outcome).toBe('processed')
      expect(await stepsOf(older.id)).toEqual(['1:after', '1:before'])
      expect(await stepsOf(newer.id)).toEqual(['1:after', '1:before'])
      // Let go by the handler: its failure, nothing of it kept, the retry applies it once.
      const failed = await receiver.receive(await send(thrown, 1))
      expect([failed.status, failed.error?.code]).toEqual([500, 'handler_failed'])
      expect(await stepsOf(thrown.id)).toEqual([])
      expect((await receiver.receive(await send(thrown, 2))).outcome).toBe('processed')
      expect((await receiver.receive(await send(thrown, 3))).outcome).toBe('duplicate')
      expect(await stepsOf(thrown.id)).toEqual(['2:after', '2:before'])
    })
  }
})

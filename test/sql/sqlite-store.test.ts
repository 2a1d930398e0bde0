/**
 * The SQLite store on node:sqlite and on better-sqlite3: the shared store
 * contract, the one-row-per-conversion cases and the receiver cases, as on
 * Postgres and MySQL, with ctx.tx the database inside BEGIN IMMEDIATE.
 */
import { randomUUID } from 'node:crypto'
import { createReceiver } from '@affiliate-webhooks/core'
import { STORE_STATEMENT_TIMEOUT_MS } from '@affiliate-webhooks/core/internal'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import {
  type SqliteDatabase,
  type SqliteStatement,
  sqliteSchema,
  sqliteStore,
} from '@affiliate-webhooks/sqlite'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { storeContract } from '../stores/store-contract.js'
import { sqlReceiverCases } from './sql-receiver-cases.js'
import { sqlStoreCases } from './sql-store-cases.js'
import {
  createSqliteTestFile,
  openSqlite,
  SQLITE_LIBRARIES,
  type SqliteLibrary,
} from './sqlite-db.js'

const prefixFor = (prefix: string | undefined) =>
  prefix === undefined
    ? 'aw_'
    : `aw_${prefix
        .replace(/[^a-z0-9]/gi, '')
        .toLowerCase()
        .slice(-8)}_`

describe.each(SQLITE_LIBRARIES)('sqliteStore on %s', (library) => {
  const file = createSqliteTestFile()
  const database = openSqlite(library, file.file)
  const name = `sqliteStore (${library})`

  // One writer per file: a case that leaves a claim open holds the file until
  // its lease, so each case of the contracts gets a file and connection of its own.
  const opened: { close(): void; drop(): void }[] = []
  const fresh = () => {
    const other = createSqliteTestFile()
    const db = openSqlite(library, other.file)
    opened.push({ close: () => db.close(), drop: other.drop })
    return db
  }
  afterAll(() => {
    database.close()
    file.drop()
    for (const each of opened) {
      each.close()
      each.drop()
    }
  })

  storeContract(name, ({ prefix, ...timings }) =>
    sqliteStore({ database: fresh(), tablePrefix: prefixFor(prefix), ...timings }),
  )

  sqlStoreCases(name, async (options) => sqliteStore({ database: fresh(), ...options }))

  sqlReceiverCases<SqliteDatabase>(name, {
    store: (options) => sqliteStore({ database, ...options }),
    query: async (tx, sql, params = []) => {
      const statement = tx.prepare(sql)
      // better-sqlite3 runs a statement that returns no rows with run() only.
      return (statement as { reader?: boolean }).reader === false
        ? statement.run(...params)
        : statement.all(...params)
    },
    exec: async (sql, params = []) => {
      database.prepare(sql).run(...params)
    },
    count: async (sql, params = []) =>
      Number((database.prepare(sql).get(...params) as { n: number }).n),
    ledgerDdl: (table) =>
      `CREATE TABLE ${table} (event_id TEXT PRIMARY KEY, conversion_id INTEGER, commission TEXT)`,
    insertSql: (table) => `INSERT INTO ${table} VALUES (?, ?, ?)`,
    spoil: {
      title: 'ended the transaction with a conflict clause it caught (INSERT OR ROLLBACK)',
      run: async (tx) => {
        tx.exec('CREATE TABLE IF NOT EXISTS spoiled (id INTEGER PRIMARY KEY)')
        tx.exec('INSERT OR IGNORE INTO spoiled VALUES (1)')
        try {
          tx.exec('INSERT OR ROLLBACK INTO spoiled VALUES (1)')
        } catch {}
      },
      status: 500,
      code: 'handler_failed',
    },
  })

  describe(`${name}: what a handler may and may not do with ctx.tx`, () => {
    const db = fresh()
    const m = misuseSetup(db)
    conflictCases(name, db, m)
    controlCases(name, db, m)
    outerHandleCases(name, db, m)
    if (library === 'better-sqlite3') transactionFunctionCase(name, db, m)
    interleavedCase(name, db, m)
    boundedCommitCase(name, library)
  })

  driverCases(name, library, database)
})

const MISUSE_SECRET = 'whsec_sqlite_misuse'

async function misuseDelivery(event: object) {
  const signed = await signedDelivery({ secret: MISUSE_SECRET, event })
  return { headers: signed.headers, rawBody: new TextEncoder().encode(signed.body) }
}

const codeOf = (error: unknown) => (error as { code?: unknown }).code

/** Each statement that rolls back the whole transaction on a conflict, in the tables of {@link misuseTables}. */
const CONFLICTS = [
  { form: 'INSERT OR ROLLBACK', sql: "INSERT OR ROLLBACK INTO keys_or VALUES ('taken')" },
  { form: 'a column ON CONFLICT ROLLBACK', sql: "INSERT INTO keys_oc VALUES ('taken')" },
  { form: "a trigger's RAISE(ROLLBACK)", sql: "INSERT INTO keys_trig VALUES ('x', 1)" },
] as const

/** Texts that would end or split the transaction, as a handler might send them. */
const CONTROL_TEXTS = [
  'BEGIN',
  'BEGIN IMMEDIATE',
  'COMMIT',
  'END',
  'END TRANSACTION',
  'ROLLBACK',
  'commit; -- done',
  'SELECT 1; ROLLBACK',
  '/* undo */ Rollback Transaction',
  'VACUUM',
  "DETACH DATABASE 'other'",
]

const misuseTables = `
  CREATE TABLE effects (event_id TEXT NOT NULL, what TEXT NOT NULL);
  CREATE TABLE keys_or (id TEXT PRIMARY KEY);
  CREATE TABLE keys_oc (id TEXT PRIMARY KEY ON CONFLICT ROLLBACK);
  CREATE TABLE keys_trig (id TEXT, bad INTEGER);
  CREATE TRIGGER keys_trig_refuses BEFORE INSERT ON keys_trig WHEN NEW.bad = 1
    BEGIN SELECT RAISE(ROLLBACK, 'refused by the trigger'); END;
  INSERT INTO keys_or VALUES ('taken');
  INSERT INTO keys_oc VALUES ('taken');`

type Db = SqliteDatabase & { close(): void }

/** The misuse suite's database: its own file, with the tables above. */
function misuseSetup(db: Db) {
  db.exec(misuseTables)
  let conversion = 90_000
  return {
    write: (tx: SqliteDatabase, eventId: string, what: string) =>
      tx.prepare('INSERT INTO effects VALUES (?, ?)').run(eventId, what),
    effectsOf: (eventId: string) =>
      (
        db.prepare('SELECT what FROM effects WHERE event_id = ? ORDER BY rowid').all(eventId) as {
          what: string
        }[]
      ).map((row) => row.what),
    event: () => buildConversionEvent({ conversion: { id: ++conversion } }),
    inTransaction: () => {
      const open = db as { isTransaction?: boolean; inTransaction?: boolean }
      return Boolean(open.isTransaction ?? open.inTransaction)
    },
  }
}

/** Item 4 of issue 52: a whole-transaction rollback the handler catches. */
function conflictCases(name: string, db: Db, m: ReturnType<typeof misuseSetup>) {
  it.each(CONFLICTS)(
    `${name}: a handler that catches $form and goes on is answered 500 handler_failed; its later statements are refused at once; after the retry its effects are there once`,
    async ({ sql }) => {
      let attempt = 0
      const seen: unknown[] = []
      const receiver = createReceiver({
        secret: MISUSE_SECRET,
        logger: false,
        store: sqliteStore({ database: db }),
        async onConversion(_conversion, event, ctx) {
          attempt++
          m.write(ctx.tx, event.id, 'before')
          if (attempt === 1) {
            try {
              ctx.tx.prepare(sql).run()
            } catch {}
            // A handler that goes on after the error: nothing may autocommit.
            try {
              m.write(ctx.tx, event.id, 'after')
            } catch (error) {
              seen.push(codeOf(error), (error as Error).message)
            }
            return
          }
          m.write(ctx.tx, event.id, 'after')
        },
      })
      const event = m.event()
      const first = await receiver.receive(await misuseDelivery(event))
      const keptByFirst = m.effectsOf(event.id)
      // The service retries until a 2xx.
      let retried = await receiver.receive(await misuseDelivery(event))
      if (retried.status >= 300) retried = await receiver.receive(await misuseDelivery(event))
      expect(m.effectsOf(event.id)).toEqual(['before', 'after'])
      expect([first.status, first.error?.code]).toEqual([500, 'handler_failed'])
      expect(first.error?.message).toMatch(/OR ROLLBACK/)
      expect(seen).toEqual(['ERR_AW_TX_GONE', expect.stringMatching(/throw/)])
      expect(keptByFirst).toEqual([])
      expect(retried.outcome).toBe('processed')
      expect((await receiver.receive(await misuseDelivery(event))).outcome).toBe('duplicate')
      expect(attempt).toBe(2)
    },
  )

  it(`${name}: a failed statement with the default conflict handling (ABORT), caught, undoes only itself: the rest commits`, async () => {
    const receiver = createReceiver({
      secret: MISUSE_SECRET,
      store: sqliteStore({ database: db }),
      async onConversion(_conversion, event, ctx) {
        m.write(ctx.tx, event.id, 'before')
        expect(() => ctx.tx.prepare("INSERT INTO keys_or VALUES ('taken')").run()).toThrow(/UNIQUE/)
        m.write(ctx.tx, event.id, 'after')
      },
    })
    const event = m.event()
    expect((await receiver.receive(await misuseDelivery(event))).outcome).toBe('processed')
    expect(m.effectsOf(event.id)).toEqual(['before', 'after'])
  })

  it(`${name}: ctx.tx stays refused after a conflict rollback even when the handler begins a transaction on the outer handle; the store rolls that back`, async () => {
    let attempt = 0
    const receiver = createReceiver({
      secret: MISUSE_SECRET,
      logger: false,
      store: sqliteStore({ database: db }),
      async onConversion(_conversion, event, ctx) {
        attempt++
        m.write(ctx.tx, event.id, 'before')
        if (attempt > 1) return
        try {
          ctx.tx.exec(CONFLICTS[0].sql)
        } catch {}
        db.exec('BEGIN')
        db.prepare('INSERT INTO effects VALUES (?, ?)').run(event.id, 'outer')
        // Uncaught: the handler's failure, answered 500.
        m.write(ctx.tx, event.id, 'after')
      },
    })
    const event = m.event()
    const first = await receiver.receive(await misuseDelivery(event))
    expect([first.status, first.error?.code]).toEqual([500, 'handler_failed'])
    expect(codeOf(first.error?.cause)).toBe('ERR_AW_TX_GONE')
    expect(m.inTransaction()).toBe(false)
    expect(m.effectsOf(event.id)).toEqual([])
    expect((await receiver.receive(await misuseDelivery(event))).outcome).toBe('processed')
    expect(m.effectsOf(event.id)).toEqual(['before'])
  })
}

/**
 * A COMMIT or ROLLBACK the handler sends on the outer handle, where ctx.tx
 * cannot refuse it. A COMMIT made the mark durable with the early write: the
 * event is held (never answered duplicate with its late write missing).
 */
function outerHandleCases(name: string, db: Db, m: ReturnType<typeof misuseSetup>) {
  it.each([
    {
      end: 'ROLLBACK',
      code: 'handler_failed',
      said: /outside ctx.tx/,
      retry: 200,
      effects: ['retry'],
    },
    { end: 'COMMIT', code: 'event_held', said: /committed by/, retry: 500, effects: ['early'] },
  ])(
    `${name}: $end on the outer handle: ctx.tx refuses the next statement at once, the commit answers 500 $code, and the retry is answered $retry`,
    async ({ end, code, said, retry, effects }) => {
      let attempt = 0
      const seen: unknown[] = []
      const receiver = createReceiver({
        secret: MISUSE_SECRET,
        logger: false,
        store: sqliteStore({ database: db }),
        async onConversion(_conversion, event, ctx) {
          attempt++
          if (attempt > 1) {
            m.write(ctx.tx, event.id, 'retry')
            return
          }
          m.write(ctx.tx, event.id, 'early')
          db.exec(end)
          try {
            m.write(ctx.tx, event.id, 'late')
          } catch (error) {
            seen.push(codeOf(error))
          }
        },
      })
      const event = m.event()
      const first = await receiver.receive(await misuseDelivery(event))
      expect([first.status, first.error?.code]).toEqual([500, code])
      expect(first.error?.message).toMatch(said)
      expect(seen).toEqual(['ERR_AW_TX_GONE'])
      expect((await receiver.receive(await misuseDelivery(event))).status).toBe(retry)
      expect(m.effectsOf(event.id)).toEqual(effects)
    },
  )
}

/** What ctx.tx refuses before SQLite sees it, and the savepoints it lets through. */
function controlCases(name: string, db: Db, m: ReturnType<typeof misuseSetup>) {
  it(`${name}: refuses BEGIN, COMMIT, ROLLBACK and END through exec and prepare at once, naming what to do; the transaction goes on and commits`, async () => {
    const refusals: { text: string; code: unknown; message: string }[] = []
    const receiver = createReceiver({
      secret: MISUSE_SECRET,
      logger: false,
      store: sqliteStore({ database: db }),
      async onConversion(_conversion, event, ctx) {
        const tags = (
          ctx.tx as { createTagStore?: () => { run(s: TemplateStringsArray): unknown } }
        ).createTagStore
        const ways = [
          (text: string) => ctx.tx.exec(text),
          (text: string) => ctx.tx.prepare(text).run(),
          ...(tags === undefined ? [] : [() => tags.call(ctx.tx).run`COMMIT`]),
        ]
        m.write(ctx.tx, event.id, 'kept')
        for (const text of CONTROL_TEXTS) {
          for (const way of ways) {
            try {
              way(text)
              refusals.push({ text, code: 'sent', message: '' })
            } catch (error) {
              refusals.push({ text, code: codeOf(error), message: (error as Error).message })
            }
          }
        }
        try {
          ;(ctx.tx as Db).close()
        } catch (error) {
          refusals.push({ text: 'close()', code: codeOf(error), message: (error as Error).message })
        }
        expect(m.inTransaction()).toBe(true)
      },
    })
    const event = m.event()
    expect((await receiver.receive(await misuseDelivery(event))).outcome).toBe('processed')
    expect(refusals.length).toBeGreaterThanOrEqual(CONTROL_TEXTS.length * 2)
    for (const refusal of refusals) {
      expect(refusal).toEqual({
        text: refusal.text,
        code: 'ERR_AW_TX_CONTROL',
        message: expect.stringMatching(/Let the store commit.*savepoint/),
      })
    }
    expect((await receiver.receive(await misuseDelivery(event))).outcome).toBe('duplicate')
    expect(m.effectsOf(event.id)).toEqual(['kept'])
  })

  it(`${name}: savepoints are the handler's (released, rolled back to, or left open) and DDL is part of the transaction: the store's COMMIT keeps what they kept`, async () => {
    const receiver = createReceiver({
      secret: MISUSE_SECRET,
      store: sqliteStore({ database: db }),
      async onConversion(_conversion, event, ctx) {
        const tx = ctx.tx
        tx.exec('CREATE TABLE IF NOT EXISTS handler_ddl (id INTEGER)')
        tx.exec('SAVEPOINT a')
        m.write(tx, event.id, 'a')
        tx.exec('RELEASE a')
        tx.exec('SAVEPOINT b')
        m.write(tx, event.id, 'b')
        tx.prepare('ROLLBACK TO b').run()
        tx.exec('RELEASE SAVEPOINT b')
        tx.prepare('SAVEPOINT c').run()
        m.write(tx, event.id, 'c')
        // c is left open: the store's COMMIT commits it with the rest.
      },
    })
    const event = m.event()
    expect((await receiver.receive(await misuseDelivery(event))).outcome).toBe('processed')
    expect(m.inTransaction()).toBe(false)
    expect(m.effectsOf(event.id)).toEqual(['a', 'c'])
    // DDL is transactional in SQLite: committed with the rest.
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'handler_ddl'").get()).toEqual({
      name: 'handler_ddl',
    })
    expect((await receiver.receive(await misuseDelivery(event))).outcome).toBe('duplicate')
  })
}

/** better-sqlite3's `db.transaction(fn)`: inside the delivery's transaction it runs on a savepoint. */
function transactionFunctionCase(name: string, db: Db, m: ReturnType<typeof misuseSetup>) {
  it(`${name}: db.transaction(fn) through ctx.tx nests in a savepoint: a throwing one undoes its part only; pluck() chains stay guarded`, async () => {
    type Bs3 = SqliteDatabase & {
      transaction(fn: () => void): (() => void) & { immediate(): void }
    }
    let plucked: SqliteStatement | undefined
    const receiver = createReceiver({
      secret: MISUSE_SECRET,
      store: sqliteStore({ database: db }),
      async onConversion(_conversion, event, ctx) {
        const tx = ctx.tx as unknown as Bs3
        const counting = tx.prepare('SELECT COUNT(*) FROM effects') as SqliteStatement & {
          pluck(): SqliteStatement
        }
        plucked = counting.pluck()
        expect(typeof plucked.get()).toBe('number')
        tx.transaction(() => m.write(tx, event.id, 'kept'))()
        tx.transaction(() => m.write(tx, event.id, 'immediate')).immediate()
        expect(() =>
          tx.transaction(() => {
            m.write(tx, event.id, 'undone')
            throw new Error('part failed')
          })(),
        ).toThrow(/part failed/)
      },
    })
    const event = m.event()
    expect((await receiver.receive(await misuseDelivery(event))).outcome).toBe('processed')
    expect(m.effectsOf(event.id)).toEqual(['kept', 'immediate'])
    // pluck() returns the statement itself: the guarded one, refused once the delivery is over.
    expect(() => plucked?.get()).toThrow(/transaction is over/)
    expect((await receiver.receive(await misuseDelivery(event))).outcome).toBe('duplicate')
  })
}

type Misuse = (tx: SqliteDatabase, eventId: string, hang: Promise<void>) => Promise<void> | void

/** First attempts of the interleaved run: each writes its effect, then misbehaves (or not). */
function misuses(m: ReturnType<typeof misuseSetup>): Record<string, Misuse> {
  return {
    'well-behaved': () => {},
    'catches an OR ROLLBACK and goes on': (tx, eventId) => {
      try {
        tx.exec(CONFLICTS[0].sql)
      } catch {}
      try {
        m.write(tx, eventId, 'effect')
      } catch {}
    },
    'throws after a trigger RAISE(ROLLBACK)': (tx) => {
      tx.exec(CONFLICTS[2].sql)
    },
    'sends COMMIT': (tx) => {
      tx.exec('COMMIT')
    },
    'catches the refused ROLLBACK and goes on': (tx) => {
      try {
        tx.prepare('ROLLBACK').run()
      } catch {}
    },
    'leaves a savepoint open': (tx) => {
      tx.exec('SAVEPOINT left_open')
    },
    'never settles': async (_tx, _eventId, hang) => {
      await hang
    },
  }
}

/** The misuse suite on one connection: misbehaving handlers among well-behaved ones. */
function interleavedCase(name: string, db: Db, m: ReturnType<typeof misuseSetup>) {
  it(`${name}: misbehaving handlers interleaved with well-behaved ones: every event ends 2xx with its effect exactly once`, async () => {
    let release!: () => void
    const hang = new Promise<void>((resolve) => {
      release = resolve
    })
    const kinds = Object.entries(misuses(m))
    const attempts = new Map<string, number>()
    const kindOf = new Map<string, Misuse>()
    const receiver = createReceiver({
      secret: MISUSE_SECRET,
      logger: false,
      leaseMs: 800,
      store: sqliteStore({ database: db }),
      async onConversion(_conversion, event, ctx) {
        const attempt = (attempts.get(event.id) ?? 0) + 1
        attempts.set(event.id, attempt)
        if (attempt > 1) {
          m.write(ctx.tx, event.id, 'effect')
          return
        }
        m.write(ctx.tx, event.id, 'effect')
        await kindOf.get(event.id)?.(ctx.tx, event.id, hang)
      },
    })
    const events = [...kinds, ...kinds].map(([kind, misuse]) => {
      const event = m.event()
      kindOf.set(event.id, misuse)
      return { kind, event }
    })
    // Each event sent at once, then retried until a 2xx, as the service does.
    const answers = await Promise.all(
      events.map(async ({ kind, event }) => {
        for (let tries = 1; tries <= 20; tries++) {
          const answer = await receiver.receive(await misuseDelivery(event))
          if (answer.status < 300) return { kind, outcome: answer.outcome, tries }
        }
        return { kind, outcome: 'never 2xx', tries: 20 }
      }),
    )
    release()
    for (const answer of answers) {
      expect(answer, answer.kind).toEqual(expect.objectContaining({ outcome: expect.any(String) }))
      expect(['processed', 'duplicate'], answer.kind).toContain(answer.outcome)
    }
    for (const { kind, event } of events) {
      expect([kind, m.effectsOf(event.id)]).toEqual([kind, ['effect']])
    }
  }, 30_000)

  it(`${name}: a handler that never settles: at its lease the transaction rolls back, the claim is forgotten and ctx.tx refuses`, async () => {
    const store = sqliteStore({ database: db })
    const begun = await store.begin({ eventId: `evt_hang_${randomUUID()}`, order: 1, leaseMs: 200 })
    if (begun.status !== 'claimed') throw new Error(`expected claimed, got ${begun.status}`)
    const tx = begun.claim.tx as Db
    m.write(tx, begun.claim.eventId, 'hung')
    await vi.waitFor(() => expect(m.inTransaction()).toBe(false), { timeout: 5_000 })
    expect(() => m.write(tx, begun.claim.eventId, 'late')).toThrow(/transaction is over/)
    // Nothing of the claim is left in the store: its commit and release find nothing.
    expect(await store.commit(begun.claim)).toBe(false)
    await store.release(begun.claim)
    expect(m.effectsOf(begun.claim.eventId)).toEqual([])
    const next = await store.begin({ eventId: `evt_next_${randomUUID()}`, order: 1 })
    expect(next.status).toBe('claimed')
    if (next.status === 'claimed') expect(await store.commit(next.claim)).toBe(true)
  })
}

/** Item 3 of issue 52: the commit's wait on the database is bounded, and the event loop runs meanwhile. */
function boundedCommitCase(name: string, library: SqliteLibrary) {
  it(`${name}: a COMMIT kept busy by a reader (rollback journal) gives up after STORE_STATEMENT_TIMEOUT_MS without blocking the event loop; nothing is committed`, async () => {
    const file = createSqliteTestFile()
    const db = openSqlite(library, file.file, 'DELETE')
    const reader = openSqlite(library, file.file, 'DELETE')
    try {
      const m = misuseSetup(db)
      const store = sqliteStore({ database: db })
      const begun = await store.begin({ eventId: `evt_busy_${randomUUID()}`, order: 1 })
      if (begun.status !== 'claimed') throw new Error(`expected claimed, got ${begun.status}`)
      m.write(begun.claim.tx as Db, begun.claim.eventId, 'effect')
      // A read transaction's SHARED lock: the COMMIT cannot write the file while it lasts.
      reader.exec('BEGIN')
      reader.prepare('SELECT COUNT(*) AS n FROM effects').get()
      let ticks = 0
      const ticking = setInterval(() => ticks++, 50)
      const started = performance.now()
      const failed = await store.commit(begun.claim).then(
        () => undefined,
        (error: unknown) => error as Error,
      )
      const waited = performance.now() - started
      clearInterval(ticking)
      expect(failed?.message).toMatch(/COMMIT .* stayed busy for 5000 ms/)
      expect(waited).toBeGreaterThanOrEqual(STORE_STATEMENT_TIMEOUT_MS - 50)
      expect(waited).toBeLessThan(STORE_STATEMENT_TIMEOUT_MS + 4000)
      expect(ticks).toBeGreaterThanOrEqual(10)
      reader.exec('COMMIT')
      expect(m.inTransaction()).toBe(false)
      expect(m.effectsOf(begun.claim.eventId)).toEqual([])
      const next = await store.begin({ eventId: `evt_after_${randomUUID()}`, order: 1 })
      expect(next.status).toBe('claimed')
      if (next.status === 'claimed') expect(await store.commit(next.claim)).toBe(true)
    } finally {
      reader.close()
      db.close()
      file.drop()
    }
  }, 20_000)
}

/** What only this store on this library does: the idiom, late use of ctx.tx, the synchronous level, the option checks. */
function driverCases(name: string, library: SqliteLibrary, database: Db) {
  describe(`${name}: the driver itself`, () => {
    it('writes through ctx.tx in the library idiom, with the mark; a redelivery is a duplicate', async () => {
      database.exec(
        'CREATE TABLE IF NOT EXISTS idiom_ledger (event_id TEXT PRIMARY KEY, commission TEXT)',
      )
      const secret = 'whsec_sqlite'
      const receiver = createReceiver({
        secret,
        store: sqliteStore({ database }),
        async onConversion(conversion, event, ctx) {
          ctx.tx
            .prepare('INSERT INTO idiom_ledger VALUES (?, ?)')
            .run(event.id, conversion.commission)
        },
      })
      const event = buildConversionEvent({ conversion: { id: 6161, commission: '2.50' } })
      const signed = await signedDelivery({ secret, event })
      const input = { headers: signed.headers, rawBody: new TextEncoder().encode(signed.body) }
      expect((await receiver.receive(input)).outcome).toBe('processed')
      expect((await receiver.receive(input)).outcome).toBe('duplicate')
      expect(
        database.prepare('SELECT commission FROM idiom_ledger WHERE event_id = ?').all(event.id),
      ).toEqual([expect.objectContaining({ commission: '2.50' })])
    })

    it('refuses ctx.tx and statements prepared through it once the claim is settled', async () => {
      const store = sqliteStore({ database })
      const begun = await store.begin({ eventId: `evt_late_${randomUUID()}`, order: 1 })
      if (begun.status !== 'claimed') throw new Error(`expected claimed, got ${begun.status}`)
      const tx = begun.claim.tx as SqliteDatabase
      const statement = tx.prepare('SELECT 1 AS one')
      expect(statement.get()).toEqual(expect.objectContaining({ one: 1 }))
      expect(await store.commit(begun.claim)).toBe(true)
      expect(() => tx.prepare('SELECT 1')).toThrow(/transaction is over/)
      expect(() => statement.get()).toThrow(/transaction is over/)
    })

    it('sets synchronous FULL, and prints a DDL that makes the same tables', async () => {
      const store = sqliteStore({ database, tablePrefix: 'aw_ddl_' })
      await store.ready()
      expect(database.prepare('PRAGMA synchronous').get()).toEqual(
        expect.objectContaining({ synchronous: 2 }),
      )
      const other = createSqliteTestFile()
      const fresh = openSqlite(library, other.file)
      try {
        fresh.exec(sqliteSchema({ tablePrefix: 'aw_ddl_' }))
        fresh.exec(sqliteSchema({ tablePrefix: 'aw_ddl_' }))
        const tables = (db: SqliteDatabase) =>
          db
            .prepare("SELECT name, sql FROM sqlite_master WHERE name LIKE 'aw_ddl_%' ORDER BY name")
            .all()
        expect(tables(fresh)).toEqual(tables(database))
      } finally {
        fresh.close()
        other.drop()
      }
    })

    it('refuses something that is not a SQLite connection, and a closed one', () => {
      expect(() => sqliteStore({ database: {} as SqliteDatabase })).toThrow(
        /DatabaseSync or a better-sqlite3 Database/,
      )
      const other = createSqliteTestFile()
      const closed = openSqlite(library, other.file)
      closed.close()
      expect(() => sqliteStore({ database: closed })).toThrow(/closed/)
      other.drop()
    })
  })
}

/**
 * The SQLite store on node:sqlite and on better-sqlite3: the shared store
 * contract, the one-row-per-conversion cases and the receiver cases, as on
 * Postgres and MySQL, with ctx.tx the database inside BEGIN IMMEDIATE.
 */
import { randomUUID } from 'node:crypto'
import { createReceiver } from '@affiliate-webhooks/core'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import { type SqliteDatabase, sqliteSchema, sqliteStore } from '@affiliate-webhooks/sqlite'
import { afterAll, describe, expect, it } from 'vitest'
import { storeContract } from '../stores/store-contract.js'
import { sqlReceiverCases } from './sql-receiver-cases.js'
import { sqlStoreCases } from './sql-store-cases.js'
import { createSqliteTestFile, openSqlite, SQLITE_LIBRARIES } from './sqlite-db.js'

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
      title: 'ended the transaction itself (ROLLBACK)',
      run: async (tx) => {
        tx.exec('ROLLBACK')
      },
      status: 503,
      code: 'store_unavailable',
    },
  })

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
})

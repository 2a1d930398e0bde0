/**
 * Commits the store did not send, on MariaDB (issue 57), through mysql2 and
 * through Prisma's MariaDB adapter: a COMMIT past the statement reader (padded,
 * in a procedure, in a compound statement), an implicit commit (DDL in a
 * compound statement or a procedure), autocommit turned on, a hidden ROLLBACK
 * and the claim's savepoint set again. The handler writes a, sends the
 * statement, writes b and throws on attempt 1. Whatever the statement does,
 * checked by reading the database: never a 2xx with effects missing, never an
 * effect twice, an event whose mark escaped is held (500 event_held, never
 * duplicate or stale) and named in the log once, and once resolved the retry
 * is answered and the ledger is whole. No case depends on the reader: each
 * passes whether or not it refuses the statement.
 */
import { randomUUID } from 'node:crypto'
import {
  createReceiver,
  type EventStore,
  type Logger,
  type ReceiveResult,
} from '@affiliate-webhooks/core'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import { mysqlStore } from '@affiliate-webhooks/mysql'
import {
  type PrismaRawQueries,
  prismaHeldEvents,
  prismaStore,
  resolvePrismaHeld,
} from '@affiliate-webhooks/prisma'
import { PrismaMariaDb } from '@prisma/adapter-mariadb'
import type { PoolConnection } from 'mysql2/promise'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createMysqlTestDatabase, type MysqlTestDatabase } from '../support/mysql-db.js'
import { type PrismaClientFor, prismaClientPath } from './prisma-clients.js'

const SECRET = 'whsec_mysql_escape'

async function delivery(event: object, attempt = 1) {
  const signed = await signedDelivery({ secret: SECRET, event, attempt })
  return { headers: signed.headers, rawBody: new TextEncoder().encode(signed.body) }
}

const acknowledged = (result: ReceiveResult) => result.status >= 200 && result.status < 300

/** The statements that end the claim's transaction without the store, by what they are. */
const ESCAPES: Record<string, string> = {
  'COMMIT after 4,100 spaces': `${' '.repeat(4100)}COMMIT`,
  'COMMIT after 5,000 tabs and newlines': `${'\t\n'.repeat(2500)}COMMIT`,
  'CALL of a procedure that commits': 'CALL app_flush()',
  'CALL of another procedure, that runs DDL': 'CALL app_ddl()',
  'IF 1 THEN COMMIT; END IF': 'IF 1 THEN COMMIT; END IF',
  'CASE WHEN 1 THEN COMMIT; END CASE': 'CASE WHEN 1 THEN COMMIT; END CASE',
  'IF 1 THEN CREATE TABLE ...; END IF':
    'IF 1 THEN CREATE TABLE IF NOT EXISTS escape_ddl (id INT); END IF',
  'a LOOP that commits, then fails': "LOOP COMMIT; SIGNAL SQLSTATE '45000'; END LOOP",
  'REPEAT ... COMMIT': 'REPEAT COMMIT; UNTIL 1 END REPEAT',
  'FOR ... COMMIT': 'FOR i IN 1..1 DO COMMIT; END FOR',
  'WHILE ... CREATE TABLE': `WHILE NOT EXISTS (SELECT 1 FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'escape_w') DO CREATE TABLE escape_w (id INT); END WHILE`,
  'SET `autocommit` = 1': 'SET `autocommit` = 1',
  'SET @@`autocommit`=1': 'SET @@`autocommit`=1',
  'SET SESSION `autocommit`=1': 'SET SESSION `autocommit`=1',
}

/** A Logger whose errors the test reads. */
function spyLogger() {
  const logger = { warn: vi.fn(), error: vi.fn() }
  return logger as typeof logger & Logger
}

/** One driver's store on the test database, and how a handler sends a text on its ctx.tx. */
interface Driver {
  name: string
  open(db: MysqlTestDatabase): Promise<{
    store(logger: Logger): EventStore<unknown>
    raw(tx: unknown, sql: string): Promise<unknown>
    query(tx: unknown, sql: string, params: unknown[]): Promise<unknown>
    /** The driver's own listing and resolving of held events. */
    heldEvents(): Promise<{ eventId: string; conversionId: number | undefined }[]>
    resolveHeld(eventId: string, how: 'rerun' | 'accept'): Promise<{ next: string }>
    close(): Promise<void>
  }>
}

const mysql2Driver: Driver = {
  name: 'mysqlStore (mysql2 on MariaDB)',
  open: async (db) => {
    const resolver = mysqlStore({ pool: db.pool, logger: false })
    return {
      store: (logger) => mysqlStore({ pool: db.pool, logger }),
      raw: (tx, sql) => (tx as PoolConnection).query(sql),
      query: (tx, sql, params) => (tx as PoolConnection).query(sql, params),
      heldEvents: () => resolver.heldEvents(),
      resolveHeld: (eventId, how) => resolver.resolveHeld(eventId, how),
      close: async () => {},
    }
  },
}

const prismaDriver: Driver = {
  name: 'prismaStore (MariaDB)',
  open: async (db) => {
    const { PrismaClient } = await import(await prismaClientPath('mysql'))
    const url = new URL(db.url)
    const prisma: PrismaClientFor<PrismaRawQueries> = new PrismaClient({
      adapter: new PrismaMariaDb({
        host: url.hostname,
        port: Number(url.port),
        user: decodeURIComponent(url.username),
        database: db.database,
        connectionLimit: 10,
      }),
    })
    return {
      store: (logger) => prismaStore({ prisma, logger }),
      raw: (tx, sql) => (tx as PrismaRawQueries).$executeRawUnsafe(sql),
      query: (tx, sql, params) => (tx as PrismaRawQueries).$executeRawUnsafe(sql, ...params),
      heldEvents: () => prismaHeldEvents(prisma),
      resolveHeld: (eventId, how) => resolvePrismaHeld(prisma, eventId, how),
      close: () => prisma.$disconnect(),
    }
  },
}

for (const driver of [mysql2Driver, prismaDriver]) {
  describe(`${driver.name}: a commit the store did not send`, () => {
    let db: MysqlTestDatabase
    let on: Awaited<ReturnType<Driver['open']>>
    const table = `escape_${randomUUID().slice(0, 8)}`
    beforeAll(async () => {
      db = await createMysqlTestDatabase({ connectionLimit: 30 })
      on = await driver.open(db)
      await db.pool.query(
        `CREATE TABLE ${table} (id BIGINT AUTO_INCREMENT PRIMARY KEY, event_id VARCHAR(64) NOT NULL, attempt INT NOT NULL, step VARCHAR(16) NOT NULL) ENGINE=InnoDB`,
      )
      await db.pool.query(
        'CREATE TABLE escape_status (conversion_id BIGINT PRIMARY KEY, status VARCHAR(16) NOT NULL) ENGINE=InnoDB',
      )
      await db.pool.query('CREATE PROCEDURE app_flush() BEGIN COMMIT; END')
      await db.pool.query(
        'CREATE PROCEDURE app_ddl() BEGIN CREATE TABLE IF NOT EXISTS escape_ddl2 (id INT); END',
      )
    })
    afterAll(async () => {
      await on?.close()
      await db?.drop()
    })
    const insert = (tx: unknown, eventId: string, attempt: number, step: string) =>
      on.query(tx, `INSERT INTO ${table} (event_id, attempt, step) VALUES (?, ?, ?)`, [
        eventId,
        attempt,
        step,
      ])
    const stepsOf = async (eventId: string) =>
      (
        (
          await db.pool.query(
            `SELECT attempt, step FROM ${table} WHERE event_id = ? ORDER BY attempt, step`,
            [eventId],
          )
        )[0] as { attempt: number; step: string }[]
      ).map((row) => `${Number(row.attempt)}:${row.step}`)

    for (const [title, statement] of Object.entries(ESCAPES)) {
      it(`${title}: never 2xx with effects missing; held until resolved, then whole`, async () => {
        const logger = spyLogger()
        let attempt = 0
        const receiver = createReceiver({
          secret: SECRET,
          logger: false,
          store: on.store(logger),
          async onConversion(_conversion, event, ctx) {
            attempt++
            await insert(ctx.tx, event.id, attempt, 'a')
            if (attempt === 1) {
              await on.raw(ctx.tx, statement).catch(() => {})
              await insert(ctx.tx, event.id, attempt, 'b').catch(() => {})
              throw new Error('attempt 1 fails after its statement')
            }
            await insert(ctx.tx, event.id, attempt, 'b')
          },
        })
        const event = buildConversionEvent()
        const first = await receiver.receive(await delivery(event))
        expect(first.status, first.error?.message).toBe(500)
        const second = await receiver.receive(await delivery(event, 2))
        if (acknowledged(second)) {
          // The statement never reached the server, or rolled everything back: the retry ran whole.
          expect(second.outcome).toBe('processed')
          expect(await stepsOf(event.id)).toEqual(['2:a', '2:b'])
        } else {
          // The mark escaped with a: held, never duplicate, named in the log once.
          expect([second.status, second.error?.code], second.error?.message).toEqual([
            500,
            'event_held',
          ])
          expect(second.error?.message).toMatch(/writes its handler made before that statement/)
          expect(await stepsOf(event.id)).toEqual(['1:a'])
          const third = await receiver.receive(await delivery(event, 3))
          expect([third.status, third.error?.code]).toEqual([500, 'event_held'])
          const named = logger.error.mock.calls.filter(([line]) => String(line).includes(event.id))
          expect(named).toHaveLength(1)
          expect(await on.heldEvents()).toContainEqual(
            expect.objectContaining({ eventId: event.id }),
          )
          await on.resolveHeld(event.id, 'rerun')
          const fourth = await receiver.receive(await delivery(event, 4))
          expect(fourth.outcome, fourth.error?.message).toBe('processed')
          // What attempt 1 kept (said in its message), then the rerun, whole.
          expect(await stepsOf(event.id)).toEqual(['1:a', `${attempt}:a`, `${attempt}:b`])
        }
        expect((await receiver.receive(await delivery(event, 5))).outcome).toBe('duplicate')
      })
    }

    it('accept: a held event resolved as applied is a duplicate after, its ledger as it was', async () => {
      let attempt = 0
      const receiver = createReceiver({
        secret: SECRET,
        logger: false,
        store: on.store(spyLogger()),
        async onConversion(_conversion, event, ctx) {
          attempt++
          await insert(ctx.tx, event.id, attempt, 'a')
          // A procedure that commits: the reader cannot see into it.
          if (attempt === 1) await on.raw(ctx.tx, 'CALL app_flush()').catch(() => {})
          await insert(ctx.tx, event.id, attempt, 'b').catch(() => {})
          if (attempt === 1) throw new Error('attempt 1 fails')
        },
      })
      const event = buildConversionEvent()
      expect((await receiver.receive(await delivery(event))).status).toBe(500)
      const held = await receiver.receive(await delivery(event, 2))
      expect(held.error?.code).toBe('event_held')
      const resolved = await on.resolveHeld(event.id, 'accept')
      expect(resolved.next).toMatch(/duplicate/)
      expect((await receiver.receive(await delivery(event, 3))).outcome).toBe('duplicate')
      expect(await stepsOf(event.id)).toEqual(['1:a'])
      expect(await on.heldEvents()).not.toContainEqual(
        expect.objectContaining({ eventId: event.id }),
      )
    })

    it('holds the newer events of a conversion whose older event turned autocommit on and sleeps: the acknowledged status is the newest', async () => {
      const conversion = { id: 7_000_000 + Math.floor(Math.random() * 1e6) }
      const older = buildConversionEvent({ createdAt: 1_000, conversion })
      const newer = buildConversionEvent({
        type: 'conversion.updated',
        createdAt: 2_000,
        conversion,
      })
      const status = new Map([
        [older.id, 'pending'],
        [newer.id, 'approved'],
      ])
      let entered!: () => void
      const inside = new Promise<void>((resolve) => {
        entered = resolve
      })
      let wake!: () => void
      const sleeping = new Promise<void>((resolve) => {
        wake = resolve
      })
      let olderAttempts = 0
      const receiver = createReceiver({
        secret: SECRET,
        logger: false,
        store: on.store(spyLogger()),
        async onConversion(_conversion, event, ctx) {
          const write = () =>
            on.query(
              ctx.tx,
              'INSERT INTO escape_status VALUES (?, ?) ON DUPLICATE KEY UPDATE status = VALUES(status)',
              [conversion.id, status.get(event.id)],
            )
          if (event.id === older.id && ++olderAttempts === 1) {
            await on.raw(ctx.tx, 'SET `autocommit` = 1').catch(() => {})
            entered()
            await sleeping
          }
          await write()
        },
      })
      const running = receiver.receive(await delivery(older))
      let meanwhile: ReceiveResult
      try {
        await inside
        meanwhile = await receiver.receive(await delivery(newer))
      } finally {
        wake()
      }
      const olderFirst = await running
      // Never the newer acknowledged while the older may still write.
      expect(
        acknowledged(meanwhile) && !acknowledged(olderFirst),
        `${meanwhile.status} ${meanwhile.error?.code} / ${olderFirst.status}`,
      ).toBe(false)
      // Retried until acknowledged, the older first (its hold resolved when met).
      for (const event of [older, newer]) {
        for (let n = 2; n < 8; n++) {
          const result = await receiver.receive(await delivery(event, n))
          if (acknowledged(result)) break
          if (result.error?.code === 'event_held') {
            const [held] = (await on.heldEvents()).filter((h) => h.conversionId === conversion.id)
            await on.resolveHeld(held?.eventId ?? event.id, 'rerun')
          }
        }
      }
      const [rows] = await db.pool.query(
        'SELECT status FROM escape_status WHERE conversion_id = ?',
        [conversion.id],
      )
      expect((rows as { status: string }[])[0]?.status).toBe('approved')
    })

    it("a hidden ROLLBACK then the savepoint named as the claim's: never two 2xx, the effect once", async () => {
      let attempt = 0
      const receiver = createReceiver({
        secret: SECRET,
        logger: false,
        store: on.store(spyLogger()),
        async onConversion(_conversion, event, ctx) {
          attempt++
          await insert(ctx.tx, event.id, attempt, 'a')
          if (attempt === 1) {
            await on.raw(ctx.tx, 'IF 1 THEN ROLLBACK; END IF').catch(() => {})
            await on.raw(ctx.tx, 'SAVEPOINT `aw_claim`').catch(() => {})
          }
          await insert(ctx.tx, event.id, attempt, 'b').catch(() => {})
        },
      })
      const event = buildConversionEvent()
      const answers: ReceiveResult[] = []
      for (let n = 1; n <= 4; n++) answers.push(await receiver.receive(await delivery(event, n)))
      const processed = answers.filter((result) => result.outcome === 'processed')
      expect(
        processed,
        answers.map((r) => `${r.status} ${r.outcome} ${r.error?.code}`).join(', '),
      ).toHaveLength(1)
      const steps = await stepsOf(event.id)
      expect(steps).toHaveLength(2)
      expect(steps.map((step) => step.slice(-1))).toEqual(['a', 'b'])
    })
  })
}

describe('mysqlStore (mysql2 on MariaDB): session state and the layout upgrade', () => {
  let db: MysqlTestDatabase
  beforeAll(async () => {
    db = await createMysqlTestDatabase()
  })
  afterAll(async () => {
    await db?.drop()
  })

  it("never hands on a connection whose session the handler changed through ctx.tx.connection (mysql2's callback API)", async () => {
    const pool = (await import('mysql2/promise')).createPool({ uri: db.url, connectionLimit: 1 })
    try {
      const seen: number[] = []
      const receiver = createReceiver({
        secret: SECRET,
        logger: false,
        store: mysqlStore({ pool, logger: false }),
        async onConversion(_conversion, _event, ctx) {
          const tx = ctx.tx as PoolConnection
          const [rows] = await tx.query('SELECT @@SESSION.foreign_key_checks AS fk')
          seen.push(Number((rows as { fk: number }[])[0]?.fk))
          if (seen.length === 1) {
            const raw = tx.connection as unknown as {
              query(sql: string, callback: (error: unknown) => void): void
            }
            await new Promise<void>((resolve, reject) =>
              raw.query('SET SESSION foreign_key_checks = 0', (error) =>
                error ? reject(error) : resolve(),
              ),
            )
          }
        },
      })
      for (let i = 0; i < 3; i++) {
        const answer = await receiver.receive(await delivery(buildConversionEvent()))
        expect(answer.outcome, answer.error?.message).toBe('processed')
      }
      expect(seen).toEqual([1, 1, 1])
    } finally {
      await pool.end()
    }
  })

  it("never hands a handler's session settings to the next delivery on the pool's one connection", async () => {
    const pool = (await import('mysql2/promise')).createPool({ uri: db.url, connectionLimit: 1 })
    try {
      const modes: string[] = []
      const receiver = createReceiver({
        secret: SECRET,
        logger: false,
        store: mysqlStore({ pool, logger: false }),
        async onConversion(_conversion, event, ctx) {
          const tx = ctx.tx as PoolConnection
          const [rows] = await tx.query(
            'SELECT @@SESSION.sql_mode AS mode, @@SESSION.autocommit AS ac',
          )
          modes.push(String((rows as { mode: string }[])[0]?.mode))
          if (event.type === 'conversion.created') {
            await tx.query("SET SESSION sql_mode = 'ANSI_QUOTES'")
          }
        },
      })
      const first = buildConversionEvent()
      expect((await receiver.receive(await delivery(first))).outcome).toBe('processed')
      const second = buildConversionEvent({ type: 'conversion.updated' })
      expect((await receiver.receive(await delivery(second))).outcome).toBe('processed')
      expect(modes[1]).not.toContain('ANSI_QUOTES')
      // The pool's connection is as the app expects it: autocommit on, read write.
      const [rows] = await pool.query(
        'SELECT @@SESSION.autocommit AS ac, @@SESSION.tx_read_only AS ro, @@SESSION.sql_mode AS mode',
      )
      expect(rows).toEqual([expect.objectContaining({ ac: 1, ro: 0 })])
    } finally {
      await pool.end()
    }
  })

  it('upgrades layout-2 tables in place at the first start, under the setup lock, and holds escaped claims after', async () => {
    const tablePrefix = `aw_two_${randomUUID().slice(0, 6)}_`
    await mysqlStore({ pool: db.pool, tablePrefix, logger: false }).ready()
    // Layout 2 as the previous release left it: no marker's columns, version 2.
    await db.pool.query(
      `ALTER TABLE ${tablePrefix}conversions DROP COLUMN claim_token, DROP COLUMN prev_watermark, DROP COLUMN prev_event_id, DROP COLUMN prev_expires_at`,
    )
    await db.pool.query(`ALTER TABLE ${tablePrefix}events DROP COLUMN claim_token`)
    await db.pool.query(`UPDATE ${tablePrefix}schema SET version = 2`)
    await db.pool.query(
      `INSERT INTO ${tablePrefix}conversions (conversion_id, watermark, event_id, expires_at) VALUES (77, 5, 'evt_two', 99999999999999)`,
    )
    const store = mysqlStore({ pool: db.pool, tablePrefix, logger: false })
    await store.ready()
    const [version] = await db.pool.query(`SELECT MAX(version) AS v FROM ${tablePrefix}schema`)
    expect((version as { v: number }[])[0]?.v).toBe(3)
    expect((await store.begin({ eventId: 'evt_two', conversionId: 77, order: 5 })).status).toBe(
      'duplicate',
    )
    const begun = await store.begin({ eventId: 'evt_three', conversionId: 77, order: 6 })
    if (begun.status !== 'claimed') throw new Error(`not claimed: ${begun.status}`)
    // A procedure that commits: the reader cannot see into it.
    await db.pool.query('CREATE PROCEDURE IF NOT EXISTS two_flush() BEGIN COMMIT; END')
    await (begun.claim.tx as PoolConnection).query('CALL two_flush()')
    await expect(store.commit(begun.claim)).rejects.toThrow(/held/)
    await expect(
      store.begin({ eventId: 'evt_four', conversionId: 77, order: 7 }),
    ).rejects.toMatchObject({ code: 'event_held' })
    expect((await store.resolveHeld('evt_three', 'rerun')).resolution).toBe('rerun')
    const rerun = await store.begin({ eventId: 'evt_three', conversionId: 77, order: 6 })
    expect(rerun.status).toBe('claimed')
    if (rerun.status === 'claimed') expect(await store.commit(rerun.claim)).toBe(true)
  })
})

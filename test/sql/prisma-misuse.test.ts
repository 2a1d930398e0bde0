/**
 * What a handler may and may not do with ctx.tx on Prisma, beyond the shared
 * misuse suite (sql-misuse.test.ts), on PostgreSQL and on MariaDB: the tagged
 * and `Prisma.sql` forms and a nested `$transaction` refused like the raw
 * text; a deadlock caught from a model write (on MariaDB every later
 * statement refused, since InnoDB rolled everything back and the session
 * autocommits); a statement the guard does not see (transactionControl made
 * blind to texts marked unseen, as a gap in it would be) answered at the
 * commit's check; a release while a handler's statement still holds the
 * connection, bounded.
 */
import { randomUUID } from 'node:crypto'
import { createReceiver, type EventStore } from '@affiliate-webhooks/core'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import { prismaStore } from '@affiliate-webhooks/prisma'
import { PrismaMariaDb } from '@prisma/adapter-mariadb'
import { PrismaPg } from '@prisma/adapter-pg'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createMysqlTestDatabase } from '../support/mysql-db.js'
import { createPostgresTestDatabase } from '../support/postgres-db.js'
import { prismaClientPath } from './prisma-clients.js'

vi.mock('@affiliate-webhooks/core/internal', async (importOriginal) => {
  const real = await importOriginal<typeof import('@affiliate-webhooks/core/internal')>()
  return {
    ...real,
    transactionControl: (text: string, dialect: 'postgres' | 'mysql' | 'sqlite') =>
      text.includes('/* unseen */') ? undefined : real.transactionControl(text, dialect),
  }
})

const SECRET = 'whsec_prisma_misuse'

/** The generated client's transaction client, as these tests call it. */
interface Tx {
  effect: { create(args: { data: Record<string, unknown> }): Promise<unknown> }
  conversionState: {
    update(args: { where: { conversionId: bigint }; data: { status: string } }): Promise<unknown>
  }
  $executeRaw(strings: TemplateStringsArray | object, ...values: unknown[]): Promise<number>
  $queryRaw(strings: TemplateStringsArray | object, ...values: unknown[]): Promise<unknown>
  $executeRawUnsafe(text: string, ...values: unknown[]): Promise<number>
  $queryRawUnsafe(text: string, ...values: unknown[]): Promise<unknown>
  $transaction<R>(work: (inner: Tx) => Promise<R>): Promise<R>
}

interface PrismaNamespace {
  sql(strings: TemplateStringsArray, ...values: unknown[]): object
  raw(text: string): object
}

/** One database under Prisma, as these tests drive it. */
interface Side {
  prisma: { $disconnect(): Promise<void> }
  Prisma: PrismaNamespace
  store(options?: { lockWaitMs?: number }): EventStore<unknown>
  /** Runs a statement outside any delivery, `?` placeholders. */
  exec(sql: string, params?: unknown[]): Promise<void>
  count(sql: string, params?: unknown[]): Promise<number>
  /** Resolves once another session waits for a row lock held by a delivery. */
  someoneWaits(): Promise<void>
  /** A session that locks row `b`, then waits for `a`: the deadlock's other half. */
  lockThenWait(a: bigint, b: bigint): Promise<void>
  /** Ends the long statements these tests leave running. */
  cancelSleeps(): Promise<void>
  close(): Promise<void>
}

/** How long to wait for another session to be seen waiting: generous, for a loaded machine. */
const WAIT = { timeout: 10_000, interval: 20 }

const toDollars = (sql: string) => {
  let n = 0
  return sql.replace(/\?/g, () => `$${++n}`)
}

async function postgresSide(): Promise<Side> {
  const { PrismaClient, Prisma } = await import(await prismaClientPath('postgresql'))
  const db = await createPostgresTestDatabase()
  await db.pool.query(`CREATE TABLE effects (id bigserial PRIMARY KEY, event_id text NOT NULL,
    conversion_id bigint NOT NULL, event_order bigint NOT NULL, pid int NOT NULL)`)
  await db.pool.query(`CREATE TABLE conversion_state (conversion_id bigint PRIMARY KEY,
    status text NOT NULL, event_order bigint NOT NULL)`)
  const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: db.url, max: 8 }) })
  return {
    prisma,
    Prisma,
    store: (options) => prismaStore({ prisma, logger: false, ...options }),
    exec: async (sql, params = []) => {
      await db.pool.query(toDollars(sql), params)
    },
    count: async (sql, params = []) =>
      Number((await db.pool.query(toDollars(sql), params)).rows[0]?.n),
    someoneWaits: () =>
      vi.waitFor(async () => {
        const { rows } = await db.pool.query(
          "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
        )
        expect(rows).toHaveLength(1)
      }, WAIT),
    async lockThenWait(a, b) {
      const other = await db.pool.connect()
      // Its own detector waits long: the delivery's (1 s) finds the cycle and is the victim.
      await other.query(
        `BEGIN; SET LOCAL deadlock_timeout = '20s'; UPDATE conversion_state SET status = 'other' WHERE conversion_id = ${b}`,
      )
      other
        .query(`UPDATE conversion_state SET status = 'other' WHERE conversion_id = ${a}`)
        .then(() => other.query('ROLLBACK'))
        .catch(() => {})
        .finally(() => other.release())
    },
    async cancelSleeps() {
      await db.pool.query(
        "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'SELECT pg_sleep%'",
      )
    },
    close: async () => {
      await prisma.$disconnect()
      await db.drop()
    },
  }
}

async function mariadbSide(): Promise<Side> {
  const { PrismaClient, Prisma } = await import(await prismaClientPath('mysql'))
  const db = await createMysqlTestDatabase()
  await db.pool.query(`CREATE TABLE effects (id BIGINT AUTO_INCREMENT PRIMARY KEY,
    event_id VARCHAR(64) NOT NULL, conversion_id BIGINT NOT NULL, event_order BIGINT NOT NULL,
    pid INT NOT NULL) ENGINE=InnoDB`)
  await db.pool.query(`CREATE TABLE conversion_state (conversion_id BIGINT PRIMARY KEY,
    status VARCHAR(16) NOT NULL, event_order BIGINT NOT NULL) ENGINE=InnoDB`)
  await db.pool.query('CREATE TABLE heavy (id BIGINT AUTO_INCREMENT PRIMARY KEY, n INT)')
  const url = new URL(db.url)
  const prisma = new PrismaClient({
    adapter: new PrismaMariaDb({
      host: url.hostname,
      port: Number(url.port),
      user: decodeURIComponent(url.username),
      database: db.database,
      connectionLimit: 8,
    }),
  })
  return {
    prisma,
    Prisma,
    store: (options) => prismaStore({ prisma, logger: false, ...options }),
    exec: async (sql, params = []) => {
      await db.pool.query(sql, params)
    },
    count: async (sql, params = []) =>
      Number(((await db.pool.query(sql, params))[0] as { n: number }[])[0]?.n),
    someoneWaits: () =>
      vi.waitFor(async () => {
        // The server is shared: only this database's sessions count.
        const [rows] = await db.pool.query(
          `SELECT 1 FROM information_schema.innodb_trx t
            JOIN information_schema.processlist p ON p.id = t.trx_mysql_thread_id
            WHERE t.trx_state = 'LOCK WAIT' AND p.db = DATABASE()`,
        )
        expect(rows).toHaveLength(1)
      }, WAIT),
    async lockThenWait(a, b) {
      const other = await db.pool.getConnection()
      await other.query('START TRANSACTION')
      // InnoDB rolls back the transaction that changed fewer rows: the delivery's.
      await other.query(`INSERT INTO heavy (n) VALUES ${Array(200).fill('(1)').join(', ')}`)
      await other.query(`UPDATE conversion_state SET status = 'other' WHERE conversion_id = ${b}`)
      other
        .query(`UPDATE conversion_state SET status = 'other' WHERE conversion_id = ${a}`)
        .then(() => other.query('ROLLBACK'))
        .catch(() => {})
        .finally(() => other.release())
    },
    async cancelSleeps() {
      const [rows] = await db.pool.query(
        "SELECT id FROM information_schema.processlist WHERE db = DATABASE() AND info LIKE 'SELECT SLEEP%'",
      )
      for (const { id } of rows as { id: number }[]) await db.pool.query(`KILL QUERY ${id}`)
    },
    close: async () => {
      await prisma.$disconnect()
      await db.drop()
    },
  }
}

async function delivery(event: object, attempt = 1) {
  const signed = await signedDelivery({ secret: SECRET, event, attempt })
  return { headers: signed.headers, rawBody: new TextEncoder().encode(signed.body) }
}

/** A refused call: rejected before it reaches the server, with the code and what to do. */
async function expectRefused(send: () => PromiseLike<unknown>, what: string): Promise<void> {
  const started = performance.now()
  const error = await Promise.resolve(send()).then(
    () => undefined,
    (e: unknown) => e as Error & { code?: string },
  )
  expect(error?.code, `${what}: ${error?.message}`).toBe('ERR_AW_TX_CONTROL')
  expect(error?.message).toMatch(/Let the store commit/)
  expect(performance.now() - started).toBeLessThan(1000)
}

const effectOf = (eventId: string, pid: number) => ({
  data: { eventId, conversionId: 1n, eventOrder: 1n, pid },
})

for (const [name, open] of [
  ['PostgreSQL', postgresSide],
  ['MariaDB', mariadbSide],
] as const) {
  describe(`prismaStore (${name}): what a handler may and may not do with ctx.tx`, () => {
    let side: Side
    beforeAll(async () => {
      side = await open()
    })
    afterAll(() => side?.close())
    const effects = (eventId: string) =>
      side.count('SELECT COUNT(*) AS n FROM effects WHERE event_id = ?', [eventId])
    const pids = async (eventId: string) => {
      const pidList: number[] = []
      for (const pid of [1, 2, 3]) {
        const n = await side.count(
          'SELECT COUNT(*) AS n FROM effects WHERE event_id = ? AND pid = ?',
          [eventId, pid],
        )
        for (let i = 0; i < n; i++) pidList.push(pid)
      }
      return pidList
    }

    it('refuses the tagged, Prisma.sql and Prisma.raw forms and a nested $transaction sending COMMIT or ROLLBACK; a nested $transaction that throws undoes only its part, and the claim commits', async () => {
      const store = side.store()
      const eventId = `evt_forms_${randomUUID().slice(0, 8)}`
      const begun = await store.begin({ eventId, order: 1 })
      if (begun.status !== 'claimed') throw new Error(`expected claimed, got ${begun.status}`)
      const tx = begun.claim.tx as Tx
      const { sql, raw } = side.Prisma
      await tx.effect.create(effectOf(eventId, 1))
      await expectRefused(() => tx.$executeRaw`COMMIT`, 'tagged $executeRaw')
      await expectRefused(() => tx.$queryRaw`/* done */ rollback`, 'tagged $queryRaw')
      await expectRefused(() => tx.$executeRaw(sql`COMMIT`), 'Prisma.sql')
      await expectRefused(() => tx.$executeRaw`SELECT 1; ${raw('COMMIT')}`, 'Prisma.raw inside')
      await expectRefused(() => tx.$queryRawUnsafe('START TRANSACTION'), '$queryRawUnsafe')
      await expectRefused(
        () => tx.$transaction((inner) => inner.$executeRawUnsafe('COMMIT')),
        'nested $transaction',
      )
      // A part that may fail: Prisma's nested transaction is a savepoint.
      await tx
        .$transaction(async (inner) => {
          await inner.effect.create(effectOf(eventId, 2))
          throw new Error('undo this part')
        })
        .catch(() => {})
      await tx.$transaction((inner) => inner.effect.create(effectOf(eventId, 3)))
      expect(await store.commit(begun.claim)).toBe(true)
      expect(await pids(eventId)).toEqual([1, 3])
    })

    it('answers a handler that catches a deadlock from a model write and goes on 500 handler_failed, commits nothing of it, and its retry once', async () => {
      const a = BigInt(1000 + 2 * Math.floor(Math.random() * 1e6))
      const bKey = a + 1n
      await side.exec(
        'INSERT INTO conversion_state (conversion_id, status, event_order) VALUES (?, ?, 1), (?, ?, 1)',
        [a, 'new', bKey, 'new'],
      )
      let attempt = 0
      const after: unknown[] = []
      const receiver = createReceiver({
        secret: SECRET,
        logger: false,
        store: side.store(),
        async onConversion(_conversion, event, ctx) {
          const tx = ctx.tx as Tx
          attempt++
          await tx.effect.create(effectOf(event.id, 1))
          if (attempt > 1) return
          await tx.conversionState.update({ where: { conversionId: a }, data: { status: 'mine' } })
          await side.lockThenWait(a, bKey)
          await side.someoneWaits()
          const deadlock = await tx.conversionState
            .update({ where: { conversionId: bKey }, data: { status: 'mine' } })
            .then(
              () => undefined,
              (error: unknown) => error,
            )
          after.push(deadlock)
          // The common retry pattern: do it again after the failure, and go on.
          for (const send of [
            () => tx.effect.create(effectOf(event.id, 2)),
            () =>
              tx.$executeRawUnsafe(
                `INSERT INTO effects (event_id, conversion_id, event_order, pid) VALUES ('${event.id}', 1, 1, 3)`,
              ),
          ]) {
            after.push(
              await send().then(
                () => undefined,
                (error: unknown) => error,
              ),
            )
          }
        },
      })
      const event = buildConversionEvent()
      const first = await receiver.receive(await delivery(event))
      expect(after[0], 'the deadlock').toBeInstanceOf(Error)
      // The rows first: what the handler wrote after the deadlock must not have committed on its own.
      expect(await pids(event.id)).toEqual([])
      expect([first.status, first.error?.code], first.error?.message).toEqual([
        500,
        'handler_failed',
      ])
      if (name === 'MariaDB') {
        // InnoDB rolled it all back and the session autocommits: refused at once.
        for (const error of after.slice(1)) {
          expect((error as { code?: string })?.code).toBe('ERR_AW_TX_GONE')
        }
      } else {
        // PostgreSQL keeps the aborted transaction and refuses them itself.
        for (const error of after.slice(1)) expect(error).toBeInstanceOf(Error)
      }
      expect((await receiver.receive(await delivery(event, 2))).outcome).toBe('processed')
      expect(await pids(event.id)).toEqual([1])
      expect((await receiver.receive(await delivery(event, 3))).outcome).toBe('duplicate')
    })

    it('answers a ROLLBACK the guard does not see at the commit: 500 handler_failed, nothing it wrote before kept, and its retry once', async () => {
      let attempt = 0
      const receiver = createReceiver({
        secret: SECRET,
        logger: false,
        store: side.store(),
        async onConversion(_conversion, event, ctx) {
          const tx = ctx.tx as Tx
          attempt++
          await tx.effect.create(effectOf(event.id, 1))
          if (attempt === 1) await tx.$executeRawUnsafe('/* unseen */ ROLLBACK')
        },
      })
      const event = buildConversionEvent()
      const first = await receiver.receive(await delivery(event))
      expect([first.status, first.error?.code], first.error?.message).toEqual([
        500,
        'handler_failed',
      ])
      expect(first.error?.message).toMatch(/could not see/)
      expect(await effects(event.id)).toBe(0)
      expect((await receiver.receive(await delivery(event, 2))).outcome).toBe('processed')
      expect(await effects(event.id)).toBe(1)
    })
  })
}

describe('prismaStore (PostgreSQL): bounded waits', () => {
  let side: Side
  beforeAll(async () => {
    side = await postgresSide()
  })
  afterAll(async () => {
    await side?.cancelSleeps()
    await side?.close()
  })

  it("releases within the store's bound while a statement of the handler still holds the connection", async () => {
    const store = side.store()
    const begun = await store.begin({ eventId: `evt_busy_${randomUUID()}`, order: 1 })
    if (begun.status !== 'claimed') throw new Error(`expected claimed, got ${begun.status}`)
    const busy = (begun.claim.tx as Tx).$queryRawUnsafe('SELECT pg_sleep(60)').catch(() => {})
    // The release must come after the statement holds the connection, as a stuck one would.
    await vi.waitFor(async () => {
      const sleeping = await side.count(
        "SELECT COUNT(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND query LIKE 'SELECT pg_sleep%'",
      )
      expect(sleeping).toBe(1)
    })
    const started = performance.now()
    await store.release(begun.claim)
    // The bound is twice the store's statement wait (5 s); the margin is for a loaded machine.
    expect(performance.now() - started).toBeLessThan(20_000)
    await side.cancelSleeps()
    await busy
  }, 40_000)
})

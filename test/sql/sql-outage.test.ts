/**
 * The database stopped under a receiver (a private server, stopped as a crash
 * would: every session gone) and started again, on node-postgres and on
 * postgres.js and on Prisma (@prisma/adapter-pg), and a private MariaDB killed
 * and restarted, then frozen, under Prisma (@prisma/adapter-mariadb; mysql2's
 * outage cases are in mysql-store.test.ts): every delivery meanwhile is
 * answered 503 store_unavailable well within the service's 10 s, nothing is
 * acknowledged that was not handled, and after the restart the retries are
 * handled once each. The log says what failed, never the password.
 */
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { EventStore } from '@affiliate-webhooks/core'
import { buildConversionEvent } from '@affiliate-webhooks/core/testing'
import { affiliateWebhook } from '@affiliate-webhooks/node'
import { postgresStore } from '@affiliate-webhooks/postgres'
import { type PrismaRawQueries, prismaStore } from '@affiliate-webhooks/prisma'
import { PrismaMariaDb } from '@prisma/adapter-mariadb'
import { PrismaPg } from '@prisma/adapter-pg'
import mysql from 'mysql2/promise'
import pg from 'pg'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PrivateMariadb, startPrivateMariadb } from '../support/mysql-db.js'
import {
  type PostgresServer,
  startPrivatePostgres,
  THROUGH_OUTAGES,
} from '../support/postgres-db.js'
import { capturedLog, timedDeliveries } from './failover-kit.js'
import { type PrismaClientFor, prismaClientPath } from './prisma-clients.js'
import { deliver, deliverUntilAcknowledged } from './sql-stores.js'

const { PrismaClient } = (await import(await prismaClientPath('postgresql'))) as {
  PrismaClient: new (options: { adapter: PrismaPg }) => PrismaClientFor<PrismaRawQueries>
}

const PASSWORD = 'outage-test-password-never-shown'
/** The store on one driver, from a connection string; `end` closes what it opened. */
interface DriverUnderTest {
  name: string
  open(
    connectionString: string,
    log: Pick<Console, 'warn' | 'error'>,
  ): {
    store: (options: { tablePrefix?: string }) => EventStore<unknown> & { ready(): Promise<void> }
    insert: (tx: unknown, eventId: string, conversionId: number) => Promise<unknown>
    end(): Promise<void>
  }
}

const DRIVERS: DriverUnderTest[] = [
  {
    name: 'pg',
    open(connectionString, log) {
      const storePool = new pg.Pool({ connectionString, max: 8 })
      return {
        store: (options) =>
          postgresStore({ pool: storePool, logger: log, acquireTimeoutMs: 2000, ...options }),
        insert: (tx, eventId, conversionId) =>
          (tx as pg.PoolClient).query('INSERT INTO effects VALUES ($1, $2)', [
            eventId,
            conversionId,
          ]),
        end: () => storePool.end(),
      }
    },
  },
  {
    name: 'postgres.js',
    open(connectionString) {
      const sql = postgres(connectionString, {
        ...THROUGH_OUTAGES,
        max: 8,
        onnotice: () => {},
        connect_timeout: 2,
      })
      return {
        store: (options) => postgresStore({ sql, acquireTimeoutMs: 2000, ...options }),
        insert: (tx, eventId, conversionId) =>
          (tx as postgres.TransactionSql)`INSERT INTO effects VALUES (${eventId}, ${conversionId})`,
        end: () => sql.end({ timeout: 1 }),
      }
    },
  },
  {
    name: 'Prisma',
    open(connectionString, log) {
      const adapter = new PrismaPg({ connectionString, max: 8, connectionTimeoutMillis: 2000 })
      const prisma = new PrismaClient({ adapter })
      return {
        store: (options) =>
          prismaStore({ prisma, logger: log, acquireTimeoutMs: 2000, ...options }),
        insert: (tx, eventId, conversionId) =>
          (tx as PrismaRawQueries).$executeRawUnsafe(
            'INSERT INTO effects VALUES ($1, $2)',
            eventId,
            conversionId,
          ),
        end: () => prisma.$disconnect(),
      }
    },
  },
]

/** Listens on a free loopback port; resolves with the receiver's URL. */
async function listening(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
}

describe.each(DRIVERS)('PostgreSQL outage on $name', (driver) => {
  let database: PostgresServer
  let pool: pg.Pool
  let opened: ReturnType<DriverUnderTest['open']>
  let server: Server
  let url: string
  const { lines, logger } = capturedLog()

  beforeAll(async () => {
    database = await startPrivatePostgres()
    // Trust authentication ignores it; it is here to be kept out of every line.
    const connectionString = database.url.replace('postgres@', `postgres:${PASSWORD}@`)
    pool = new pg.Pool({ connectionString, max: 8 })
    pool.on('error', () => {})
    await pool.query('CREATE TABLE effects (event_id text NOT NULL, conversion_id bigint NOT NULL)')
    opened = driver.open(connectionString, logger)
    server = createServer(
      affiliateWebhook({
        secret: 'whsec_sql_store_processes',
        logger,
        store: opened.store({}),
        async onConversion(conversion, event, ctx) {
          await opened.insert(ctx.tx, event.id, conversion.id)
        },
      }),
    )
    url = await listening(server)
  }, 120_000)

  afterAll(async () => {
    server?.close()
    await opened?.end().catch(() => {})
    await pool?.end().catch(() => {})
    await database?.destroy()
  })

  describe('the database stopped, then frozen', () => {
    it('answers 503 store_unavailable within 10 s while down, then handles each retry once', async () => {
      const before = buildConversionEvent({ conversion: { id: 1 } })
      expect(await deliver(url, before)).toBe(200)

      await database.stop()
      const during = Array.from({ length: 12 }, (_, i) =>
        buildConversionEvent({ conversion: { id: 100 + i } }),
      )
      const answers = await timedDeliveries(url, during)
      for (const answer of answers) {
        expect(answer.status).toBe(503)
        // The service gives up on an answer after 10 s and counts a failure.
        expect(answer.ms).toBeLessThan(10_000)
      }
      expect((await pool.query('SELECT 1').catch((e: Error) => e)) instanceof Error).toBe(true)

      await database.start()
      for (const event of during) {
        const statuses = await deliverUntilAcknowledged(() => url, event, { pauseMs: 100 })
        expect(statuses.at(-1)).toBe(200)
      }
      const { rows } = await pool.query<{ event_id: string; n: number }>(
        'SELECT event_id, count(*)::int AS n FROM effects GROUP BY event_id',
      )
      expect(rows.length).toBe(during.length + 1)
      expect(rows.every((row) => row.n === 1)).toBe(true)
      expect(lines.some((line) => line.includes('store_unavailable'))).toBe(true)
      expect(lines.join('\n')).not.toContain(PASSWORD)
    })

    it('answers 503 within 10 s when the database stops answering without closing a connection, then handles each retry once', async () => {
      const before = buildConversionEvent({ conversion: { id: 300 } })
      expect(await deliver(url, before)).toBe(200)
      // A store whose tables were never set up meets the frozen server on its first use.
      const fresh = opened.store({ tablePrefix: 'aw_frozen_' })

      database.freeze(true)
      let during: ReturnType<typeof buildConversionEvent>[]
      try {
        during = Array.from({ length: 4 }, (_, i) =>
          buildConversionEvent({ conversion: { id: 310 + i } }),
        )
        const started = performance.now()
        const [answers, setup] = await Promise.all([
          Promise.all(during.map((event) => deliver(url, event))),
          fresh.ready().then(
            () => 'ready',
            () => 'refused',
          ),
        ])
        expect(answers).toEqual(during.map(() => 503))
        expect(setup).toBe('refused')
        // The service gives up on an answer after 10 s and counts a failure.
        expect(performance.now() - started).toBeLessThan(10_000)
      } finally {
        database.freeze(false)
      }
      for (const event of during) {
        const statuses = await deliverUntilAcknowledged(() => url, event, { pauseMs: 100 })
        expect(statuses.at(-1)).toBe(200)
      }
      const { rows } = await pool.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM effects WHERE conversion_id >= 300 GROUP BY event_id',
      )
      expect(rows.map((row) => row.n)).toEqual([1, 1, 1, 1, 1])
      await fresh.ready()
    }, 60_000)
  })
})

describe('MariaDB outage on Prisma (@prisma/adapter-mariadb)', () => {
  let database: PrivateMariadb
  let prisma: PrismaClientFor<PrismaRawQueries>
  let server: Server
  let url: string
  const { lines, logger } = capturedLog()

  beforeAll(async () => {
    database = await startPrivateMariadb()
    const admin = await mysql.createConnection({ uri: database.url })
    // A user with a password, so that the password is there to be kept out of every line.
    await admin.query(`CREATE USER 'outage'@'127.0.0.1' IDENTIFIED BY '${PASSWORD}'`)
    await admin.query(`GRANT ALL ON aw.* TO 'outage'@'127.0.0.1'`)
    await admin.query(
      'CREATE TABLE effects (event_id VARCHAR(64) NOT NULL, conversion_id BIGINT NOT NULL)',
    )
    await admin.end()
    const { PrismaClient } = (await import(await prismaClientPath('mysql'))) as {
      PrismaClient: new (options: { adapter: PrismaMariaDb }) => PrismaClientFor<PrismaRawQueries>
    }
    const adapter = new PrismaMariaDb({
      host: '127.0.0.1',
      port: database.port,
      user: 'outage',
      password: PASSWORD,
      database: 'aw',
      connectionLimit: 8,
      connectTimeout: 2000,
      acquireTimeout: 2000,
    })
    prisma = new PrismaClient({ adapter })
    server = createServer(
      affiliateWebhook({
        secret: 'whsec_sql_store_processes',
        logger,
        store: prismaStore({ prisma, logger, acquireTimeoutMs: 2000 }),
        async onConversion(conversion, event, ctx) {
          await ctx.tx.$executeRawUnsafe(
            'INSERT INTO effects VALUES (?, ?)',
            event.id,
            conversion.id,
          )
        },
      }),
    )
    url = await listening(server)
  }, 120_000)

  afterAll(async () => {
    server?.close()
    await prisma?.$disconnect().catch(() => {})
    await database?.dispose()
  })

  /** Each event's effect rows, counted on a connection of the test's own. */
  async function effectCounts(): Promise<Map<string, number>> {
    const connection = await mysql.createConnection({ uri: database.url })
    try {
      const [rows] = await connection.query(
        'SELECT event_id, COUNT(*) AS n FROM effects GROUP BY event_id',
      )
      return new Map(
        (rows as { event_id: string; n: number }[]).map((r) => [r.event_id, Number(r.n)]),
      )
    } finally {
      await connection.end()
    }
  }

  it('answers 503 store_unavailable within 10 s while the server is down (killed), then handles each retry once', async () => {
    const before = buildConversionEvent({ conversion: { id: 1 } })
    expect(await deliver(url, before)).toBe(200)
    await database.kill()
    const during = Array.from({ length: 12 }, (_, i) =>
      buildConversionEvent({ conversion: { id: 100 + i } }),
    )
    for (const answer of await timedDeliveries(url, during)) {
      expect(answer.status).toBe(503)
      // The service gives up on an answer after 10 s and counts a failure.
      expect(answer.ms).toBeLessThan(10_000)
    }
    await database.restart()
    for (const event of during) {
      const statuses = await deliverUntilAcknowledged(() => url, event, { pauseMs: 100 })
      expect(statuses.at(-1)).toBe(200)
    }
    const counts = await effectCounts()
    expect([...counts.keys()].sort()).toEqual([before, ...during].map((e) => e.id).sort())
    expect([...counts.values()].every((n) => n === 1)).toBe(true)
    expect(lines.some((line) => line.includes('store_unavailable'))).toBe(true)
    expect(lines.join('\n')).not.toContain(PASSWORD)
  }, 90_000)

  it('answers 503 within 10 s while the server hangs (frozen), then handles each retry once', async () => {
    const during = Array.from({ length: 4 }, (_, i) =>
      buildConversionEvent({ conversion: { id: 300 + i } }),
    )
    await database.freeze()
    try {
      for (const answer of await timedDeliveries(url, during)) {
        expect(answer.status).toBe(503)
        expect(answer.ms).toBeLessThan(10_000)
      }
    } finally {
      await database.thaw()
    }
    for (const event of during) {
      const statuses = await deliverUntilAcknowledged(() => url, event, { pauseMs: 100 })
      expect(statuses.at(-1)).toBe(200)
    }
    const counts = await effectCounts()
    expect(during.map((event) => counts.get(event.id))).toEqual([1, 1, 1, 1])
    expect(lines.join('\n')).not.toContain(PASSWORD)
  }, 90_000)
})

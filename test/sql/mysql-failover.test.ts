/**
 * Issue 59: the MySQL store (mysql2) across a real MariaDB failover, with a
 * semi-synchronous replica, behind a TCP proxy that moves to the new primary
 * (a virtual IP). The replica is frozen: each commit waits for its
 * acknowledgement, and is killed at the store's bound, answered 503 with its
 * connection back in the pool; a retry of one of them is 503 too (its mark
 * stands on the primary only, and the write that would stand behind a
 * duplicate is not acknowledged either). Then the link is cut (the replica's
 * binlog dump thread killed): with no replica to acknowledge, deliveries are
 * rolled back and answered 503 at once. A primary that falls back to
 * asynchronous sooner than the store's bound (rpl_semi_sync_master_timeout
 * 1 s) has its commits returned unacknowledged: 503, never 2xx. The primary
 * is killed, the replica promoted, and every event delivered again: each
 * acknowledged before is applied exactly once, each answered 503 exactly once.
 * And the one warning at start: a primary with an asynchronous replica, a
 * primary whose semi-sync has no replica; none on a standalone server, a
 * replica, or a semi-sync primary with its replica.
 */
import type { EventStore } from '@affiliate-webhooks/core'
import { buildConversionEvent } from '@affiliate-webhooks/core/testing'
import { mysqlStore } from '@affiliate-webhooks/mysql'
import { type PrismaRawQueries, prismaStore } from '@affiliate-webhooks/prisma'
import { PrismaMariaDb } from '@prisma/adapter-mariadb'
import mysql from 'mysql2/promise'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  mysqlOnce,
  type ReplicatedMariadb,
  startReplicatedMariadb,
  statusOf,
} from '../support/mariadb-failover.js'
import { MYSQL_URL } from '../support/mysql-db.js'
import { movableProxy } from '../support/postgres-failover.js'
import {
  capturedLog,
  type Logged,
  type Opened,
  receiver,
  SERVICE_TIMEOUT_MS,
  timedDeliveries,
} from './failover-kit.js'
import { type PrismaClientFor, prismaClientPath } from './prisma-clients.js'
import { deliver, deliverUntilAcknowledged } from './sql-stores.js'

const POOL_SIZE = 3

interface DriverUnderTest {
  name: string
  open(port: number, log: Logged['logger']): Promise<Opened>
}

const DRIVERS: DriverUnderTest[] = [
  {
    name: 'mysqlStore (mysql2)',
    async open(port, log) {
      const pool = mysql.createPool({
        host: '127.0.0.1',
        port,
        user: 'root',
        database: 'aw',
        connectionLimit: POOL_SIZE,
        connectTimeout: 2000,
      })
      pool.on('connection', (connection) => connection.on('error', () => {}))
      return {
        store: mysqlStore({ pool, logger: log, acquireTimeoutMs: 2000 }) as EventStore<unknown>,
        insert: (tx, eventId, conversionId) =>
          (tx as mysql.PoolConnection).query('INSERT INTO effects VALUES (?, ?)', [
            eventId,
            conversionId,
          ]),
        ping: () => pool.query('SELECT 1'),
        end: () => pool.end(),
      }
    },
  },
  {
    name: 'prismaStore (@prisma/adapter-mariadb)',
    async open(port, log) {
      const { PrismaClient } = (await import(await prismaClientPath('mysql'))) as {
        PrismaClient: new (options: object) => PrismaClientFor<PrismaRawQueries>
      }
      const adapter = new PrismaMariaDb({
        host: '127.0.0.1',
        port,
        user: 'root',
        database: 'aw',
        connectionLimit: POOL_SIZE,
        connectTimeout: 2000,
      })
      const prisma = new PrismaClient({ adapter })
      return {
        store: prismaStore({ prisma, logger: log, acquireTimeoutMs: 2000 }) as EventStore<unknown>,
        insert: (tx, eventId, conversionId) =>
          (tx as PrismaRawQueries).$executeRawUnsafe(
            'INSERT INTO effects VALUES (?, ?)',
            eventId,
            conversionId,
          ),
        ping: () => prisma.$queryRawUnsafe('SELECT 1'),
        end: () => prisma.$disconnect(),
      }
    },
  },
]

/** How many times each event's effect is on the server at `url`. */
async function applied(url: string): Promise<Map<string, number>> {
  const rows = await mysqlOnce<{ event_id: string; n: number }>(
    url,
    'SELECT event_id, COUNT(*) AS n FROM effects GROUP BY event_id',
  )
  return new Map(rows.map((row) => [row.event_id, Number(row.n)]))
}

/** The primary's sessions waiting for a replica's acknowledgement (their state and statement). */
const waitingForReplica = (url: string) =>
  mysqlOnce<{ state: string; info: string | null }>(
    url,
    "SELECT STATE AS state, INFO AS info FROM information_schema.PROCESSLIST WHERE STATE LIKE '%semi-sync%' OR (INFO LIKE 'CALL %' AND COMMAND <> 'Sleep') OR STATE = 'Update'",
  )

const events = (base: number, n: number) =>
  Array.from({ length: n }, (_, i) => buildConversionEvent({ conversion: { id: base + i } }))

function expectRefused(answers: { status: number; ms: number }[]) {
  for (const answer of answers) {
    expect(answer.status).toBe(503)
    expect(answer.ms).toBeLessThan(SERVICE_TIMEOUT_MS)
  }
}

/** A replicated pair, the effects table, a proxy on the primary and a receiver behind it. */
async function setUp(driver: DriverUnderTest, timeoutMs: number) {
  const replicated = await startReplicatedMariadb({ semiSync: true, timeoutMs })
  await mysqlOnce(
    replicated.primary.url,
    'CREATE TABLE effects (event_id VARCHAR(255) NOT NULL, conversion_id BIGINT NOT NULL)',
  )
  const proxy = await movableProxy(replicated.primary.port)
  const log = capturedLog()
  const opened = await driver.open(proxy.port, log.logger)
  // The store's tables first, while the replica acknowledges: its DDL waits for one like any commit.
  await (opened.store as { ready?: () => Promise<void> }).ready?.()
  const receiving = await receiver(opened, log.logger)
  return { replicated, proxy, opened, log, receiving }
}

type World = Awaited<ReturnType<typeof setUp>>

async function tearDown(world: World | undefined) {
  world?.receiving.server.close()
  await world?.opened.end().catch(() => {})
  await world?.proxy.close()
  await world?.replicated.destroy()
}

/** The describe block's world: set up before its tests, torn down after, whatever happened. */
function worldFor(driver: DriverUnderTest, timeoutMs: number): () => World {
  let world: World | undefined
  beforeAll(async () => {
    world = await setUp(driver, timeoutMs)
  }, 90_000)
  afterAll(() => tearDown(world))
  return () => world as World
}

/** The primary killed, the replica promoted, the proxy moved; every event until acknowledged, then each counted once. */
async function failOverAndRedeliver(world: World, all: { id: string }[]) {
  await world.replicated.killPrimary()
  await world.replicated.promote()
  world.proxy.moveTo(world.replicated.replica.port)
  for (const event of all) {
    const statuses = await deliverUntilAcknowledged(() => world.receiving.url, event, {
      pauseMs: 100,
    })
    expect(statuses.at(-1)).toBe(200)
  }
  const counts = await applied(world.replicated.replica.url)
  for (const event of all) expect(counts.get(event.id)).toBe(1)
}

describe.each(DRIVERS)(
  'MariaDB failover, semi-synchronous replica (timeout 10 s), $name',
  (driver) => {
    const world = worldFor(driver, 10_000)

    it('with the replica away: bounded 503s, the pool never dry, a retry not a duplicate; across a promotion nothing lost or applied twice', async () => {
      const { replicated, receiving, opened, log } = world()
      const before = events(100, 4)
      for (const event of before) expect(await deliver(receiving.url, event)).toBe(200)
      expect(log.warnings).toEqual([])

      // Frozen: connected still, acknowledging nothing. More deliveries than the pool has connections.
      await replicated.replica.freeze()
      // The answer streak's writes wait for the replica too: each is ended at the bound,
      // not held until the primary's 10 s timeout while deliveries wait for a connection.
      const streakStarted = performance.now()
      await Promise.allSettled(
        Array.from({ length: POOL_SIZE }, () => opened.store.recordAnswer?.('store_unavailable')),
      )
      expect(performance.now() - streakStarted).toBeLessThan(8000)
      const pingStarted = performance.now()
      await opened.ping()
      expect(performance.now() - pingStarted).toBeLessThan(2000)
      // Back, and frozen again: a commit acknowledged since, so the streak is written again.
      await replicated.replica.thaw()
      const between = events(150, 1)
      expect(
        (await deliverUntilAcknowledged(() => receiving.url, between[0] as object)).at(-1),
      ).toBe(200)
      await replicated.replica.freeze()
      const waiting = events(200, 5)
      expectRefused(await timedDeliveries(receiving.url, waiting))
      await opened.ping()
      // Its mark stands on the primary, which no replica has: not answered duplicate.
      expectRefused(await timedDeliveries(receiving.url, [waiting[0] as object]))
      expect(log.lines.join('\n')).toMatch(/without a replica acknowledging it/)
      // Nothing of the store's is left waiting on the primary for the replica (a
      // session killed at the bound, the answer streak not written meanwhile).
      await expect
        .poll(() => waitingForReplica(replicated.primary.url), { timeout: 3000 })
        .toEqual([])

      // The link cut: no replica connected, nothing committed at all.
      await replicated.cutLink()
      const cut = events(300, 5)
      expectRefused(await timedDeliveries(receiving.url, cut))
      expect(log.lines.join('\n')).toMatch(/no replica acknowledges commits now/)
      await opened.ping()

      await failOverAndRedeliver(world(), [...before, ...between, ...waiting, ...cut])
    }, 150_000)
  },
)

describe.each(DRIVERS)(
  'MariaDB, semi-sync falling back to asynchronous before the bound (timeout 1 s), $name',
  (driver) => {
    const world = worldFor(driver, 1000)

    it('a commit that returns unacknowledged is a 503, as is every one after; healed, the retries are answered and applied once', async () => {
      const { replicated, receiving } = world()
      await replicated.replica.freeze()
      const during = events(400, 4)
      // One at a time: the first waits out the primary's 1 s and returns unacknowledged; the rest find semi-sync off.
      for (const event of during) {
        const [answer] = await timedDeliveries(receiving.url, [event])
        expectRefused([answer as { status: number; ms: number }])
      }
      expect(await statusOf(replicated.primary.url, 'Rpl_semi_sync_master_status')).toBe('OFF')
      // Healed: the replica catches up, semi-sync turns on again, each retry is answered.
      await replicated.replica.thaw()
      for (const event of during) {
        const statuses = await deliverUntilAcknowledged(() => receiving.url, event, {
          pauseMs: 200,
        })
        expect(statuses.at(-1)).toBe(200)
      }
      await expect
        .poll(() => applied(replicated.replica.url), { timeout: 10_000 })
        .toSatisfy((counts: Map<string, number>) =>
          during.every((event) => counts.get(event.id) === 1),
        )
    }, 120_000)
  },
)

describe.each(DRIVERS)(
  'MariaDB, semi-sync turned off and on again while a commit waits, $name',
  (driver) => {
    const world = worldFor(driver, 30_000)

    it('is a 503: the commit returned unacknowledged, though no commit was counted so', async () => {
      const { replicated, receiving, log } = world()
      // Connected, acknowledging nothing: the commit waits.
      await replicated.replica.freeze()
      const event = buildConversionEvent({ conversion: { id: 700 } })
      const answer = timedDeliveries(receiving.url, [event])
      await new Promise((resolve) => setTimeout(resolve, 1500))
      // SET GLOBAL ... = OFF lets the waiting commit return and counts it nowhere but _no_times.
      await mysqlOnce(replicated.primary.url, 'SET GLOBAL rpl_semi_sync_master_enabled = OFF')
      await mysqlOnce(replicated.primary.url, 'SET GLOBAL rpl_semi_sync_master_enabled = ON')
      expectRefused(await answer)
      expect(log.lines.join('\n')).toMatch(/without a replica acknowledging it/)
      // Its mark stands on the primary alone: the retry is not a duplicate until the replica has it.
      expectRefused(await timedDeliveries(receiving.url, [event]))
      await replicated.replica.thaw()
      const statuses = await deliverUntilAcknowledged(() => receiving.url, event, { pauseMs: 200 })
      expect(statuses.at(-1)).toBe(200)
      expect((await applied(replicated.primary.url)).get(event.id)).toBe(1)
    }, 60_000)
  },
)

describe('MariaDB: the warning at start', () => {
  let asyncPair: ReplicatedMariadb
  let semiPair: ReplicatedMariadb

  beforeAll(async () => {
    ;[asyncPair, semiPair] = await Promise.all([
      startReplicatedMariadb({ semiSync: false }),
      startReplicatedMariadb({ semiSync: true, timeoutMs: 2000 }),
    ])
  }, 90_000)

  afterAll(async () => {
    await Promise.all([asyncPair?.destroy(), semiPair?.destroy()])
  })

  async function warningsOn(url: string): Promise<string[]> {
    const log = capturedLog()
    const pool = mysql.createPool({ uri: url, connectionLimit: 2 })
    try {
      await mysqlStore({ pool, logger: log.logger }).ready()
    } finally {
      await pool.end()
    }
    return log.warnings
  }

  it('one, naming the settings, on a primary whose replica is asynchronous', async () => {
    const warnings = await warningsOn(asyncPair.primary.url)
    expect(warnings).toHaveLength(1)
    for (const setting of [
      'rpl_semi_sync_master_enabled',
      'rpl_semi_sync_slave_enabled',
      'rpl_semi_sync_master_wait_point = AFTER_SYNC',
      'rpl_semi_sync_master_timeout',
    ])
      expect(warnings[0]).toContain(setting)
    expect(warnings[0]).toMatch(/asynchronous/)
  })

  it('the same one from prismaStore on MariaDB', async () => {
    const { PrismaClient } = (await import(await prismaClientPath('mysql'))) as {
      PrismaClient: new (options: object) => PrismaClientFor<PrismaRawQueries>
    }
    const at = new URL(asyncPair.primary.url)
    const prisma = new PrismaClient({
      adapter: new PrismaMariaDb({
        host: at.hostname,
        port: Number(at.port),
        user: 'root',
        database: 'aw',
        connectionLimit: 2,
      }),
    })
    const log = capturedLog()
    try {
      await prismaStore({ prisma, logger: log.logger }).ready()
    } finally {
      await prisma.$disconnect()
    }
    expect(log.warnings).toHaveLength(1)
    expect(log.warnings[0]).toMatch(/^prismaStore: .*asynchronous.*rpl_semi_sync_slave_enabled/)
  })

  it('one saying what is not checked, for a role that may not list the replicas', async () => {
    for (const statement of [
      "CREATE USER IF NOT EXISTS 'app'@'127.0.0.1'",
      "GRANT ALL ON aw.* TO 'app'@'127.0.0.1'",
    ])
      await mysqlOnce(asyncPair.primary.url, statement)
    const warnings = await warningsOn(asyncPair.primary.url.replace('root@', 'app@'))
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(/could not tell whether the database has replicas/)
  })

  it('one on a semi-sync primary that no replica acknowledges', async () => {
    await mysqlOnce(semiPair.replica.url, 'STOP SLAVE')
    try {
      await expect
        .poll(() => statusOf(semiPair.primary.url, 'Rpl_semi_sync_master_clients'))
        .toBe('0')
      const warnings = await warningsOn(semiPair.primary.url)
      expect(warnings).toHaveLength(1)
      expect(warnings[0]).toMatch(/no replica acknowledges/)
    } finally {
      await mysqlOnce(semiPair.replica.url, 'START SLAVE')
    }
  })

  it('none on a semi-sync primary with its replica, on a replica, or on a standalone server', async () => {
    await expect
      .poll(() => statusOf(semiPair.primary.url, 'Rpl_semi_sync_master_clients'))
      .toBe('1')
    expect(await warningsOn(semiPair.primary.url)).toEqual([])
    expect(await warningsOn(asyncPair.replica.url)).toEqual([])
    const database = `aw_warn_${process.pid}`
    await mysqlOnce(MYSQL_URL, `CREATE DATABASE IF NOT EXISTS ${database}`)
    try {
      expect(await warningsOn(`${MYSQL_URL}/${database}`)).toEqual([])
    } finally {
      await mysqlOnce(MYSQL_URL, `DROP DATABASE IF EXISTS ${database}`)
    }
  })
})

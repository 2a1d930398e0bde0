/**
 * Issue 48: the PostgreSQL store across a real failover, with a synchronous
 * standby, on node-postgres (behind a TCP proxy that moves to the new primary,
 * as a virtual IP or a PgBouncer would) and on postgres.js (both hosts given,
 * target_session_attrs 'primary'). The link to the standby is cut as a
 * partition would cut it: every commit then waits for the standby, and is
 * cancelled at the store's bound, answered 503 with its connection back in the
 * pool (a pool of 3 serves 8 such deliveries, and a plain query after them);
 * a retry of one of them is 503 too (its mark stands on the primary only). The
 * primary is killed, the standby promoted, and every event delivered again:
 * each event acknowledged before is applied exactly once, each answered 503
 * during the cut is applied exactly once. A store on the standby itself (read
 * only) answers 503. A role that may not run pg_logical_emit_message still gets
 * its duplicates answered 2xx.
 */
import type { Server } from 'node:http'
import type { EventStore } from '@affiliate-webhooks/core'
import { buildConversionEvent } from '@affiliate-webhooks/core/testing'
import { postgresStore } from '@affiliate-webhooks/postgres'
import pg from 'pg'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type PostgresServer,
  startPrivatePostgres,
  THROUGH_OUTAGES,
} from '../support/postgres-db.js'
import {
  type MovableProxy,
  movableProxy,
  queryOnce,
  type ReplicatedPostgres,
  startReplicatedPostgres,
} from '../support/postgres-failover.js'
import {
  capturedLog,
  type Logged,
  type Opened,
  receiver,
  SERVICE_TIMEOUT_MS,
  timedDeliveries,
} from './failover-kit.js'
import { deliver, deliverUntilAcknowledged } from './sql-stores.js'

const POOL_SIZE = 3

interface DriverUnderTest {
  name: string
  /** The store on the primary, reaching whichever server is primary after a failover. */
  open(r: ReplicatedPostgres, proxy: MovableProxy, log: Logged['logger']): Opened
  /** A store on this one server (the standby: read only). */
  openOn(url: string, log: Logged['logger']): Opened
}

const pgOpened = (connectionString: string, log: Logged['logger']): Opened => {
  const pool = new pg.Pool({ connectionString, max: POOL_SIZE, connectionTimeoutMillis: 2000 })
  pool.on('error', () => {})
  return {
    store: postgresStore({ pool, logger: log, acquireTimeoutMs: 2000 }) as EventStore<unknown>,
    insert: (tx, eventId, conversionId) =>
      (tx as pg.PoolClient).query('INSERT INTO effects VALUES ($1, $2)', [eventId, conversionId]),
    ping: () => pool.query('SELECT 1'),
    end: () => pool.end(),
  }
}

const postgresJsOpened = (sql: postgres.Sql, log: Logged['logger']): Opened => ({
  store: postgresStore({ sql, logger: log, acquireTimeoutMs: 2000 }) as EventStore<unknown>,
  insert: (tx, eventId, conversionId) =>
    (tx as postgres.TransactionSql)`INSERT INTO effects VALUES (${eventId}, ${conversionId})`,
  ping: () => sql`SELECT 1`,
  end: () => sql.end({ timeout: 1 }),
})

const DRIVERS: DriverUnderTest[] = [
  {
    name: 'pg behind a host that moves',
    open: (_r, proxy, log) => pgOpened(`postgres://postgres@127.0.0.1:${proxy.port}/postgres`, log),
    openOn: (url, log) => pgOpened(url, log),
  },
  {
    name: "postgres.js with both hosts and target_session_attrs 'primary'",
    open: (r, _proxy, log) =>
      postgresJsOpened(
        // Both servers in the URL; the one that takes writes is used.
        postgres(
          `postgres://postgres@127.0.0.1:${r.primary.port},127.0.0.1:${r.standby.port}/postgres`,
          {
            ...THROUGH_OUTAGES,
            target_session_attrs: 'primary',
            max: POOL_SIZE,
            connect_timeout: 2,
            onnotice: () => {},
          },
        ),
        log,
      ),
    openOn: (url, log) =>
      postgresJsOpened(
        postgres(url, {
          ...THROUGH_OUTAGES,
          max: POOL_SIZE,
          connect_timeout: 2,
          onnotice: () => {},
        }),
        log,
      ),
  },
]

/** How many times each event's effect is on `url`'s database. */
async function applied(url: string): Promise<Map<string, number>> {
  const rows = await queryOnce<{ event_id: string; n: number }>(
    url,
    'SELECT event_id, count(*)::int AS n FROM effects GROUP BY event_id',
  )
  return new Map(rows.map((row) => [row.event_id, row.n]))
}

describe.each(DRIVERS)('PostgreSQL failover, synchronous standby, $name', (driver) => {
  let replicated: ReplicatedPostgres
  let proxy: MovableProxy
  let opened: Opened
  let receiving: { server: Server; url: string }
  const { lines, logger } = capturedLog()

  beforeAll(async () => {
    replicated = await startReplicatedPostgres(true)
    proxy = await movableProxy(replicated.primary.port)
    await queryOnce(
      replicated.primary.url,
      'CREATE TABLE effects (event_id text NOT NULL, conversion_id bigint NOT NULL)',
    )
    opened = driver.open(replicated, proxy, logger)
    receiving = await receiver(opened, logger)
  }, 60_000)

  afterAll(async () => {
    receiving?.server.close()
    await opened?.end().catch(() => {})
    await proxy?.close()
    await replicated?.destroy()
  })

  it('a store on the standby (read only) answers 503, never 2xx', async () => {
    // The primary's store set up its tables: the standby has them once it replays that.
    expect(await deliver(receiving.url, buildConversionEvent({ conversion: { id: 1 } }))).toBe(200)
    await expect
      .poll(() =>
        queryOnce(replicated.standby.url, "SELECT to_regclass('aw_conversions') IS NOT NULL AS t"),
      )
      .toEqual([{ t: true }])
    const local = capturedLog()
    const onStandby = driver.openOn(replicated.standby.url, local.logger)
    const standbyReceiver = await receiver(onStandby, local.logger)
    try {
      const events = [1, 2, 3].map((i) => buildConversionEvent({ conversion: { id: 10 + i } }))
      const answers = await timedDeliveries(standbyReceiver.url, events)
      for (const answer of answers) {
        expect(answer.status).toBe(503)
        expect(answer.ms).toBeLessThan(SERVICE_TIMEOUT_MS)
      }
      expect(local.lines.join('\n')).toMatch(/25006|read-only|read-write mode during recovery/)
    } finally {
      standbyReceiver.server.close()
      await onStandby.end().catch(() => {})
    }
  }, 30_000)

  it('across a promotion with the link cut: bounded 503s, the pool never dry, nothing lost or applied twice', async () => {
    const before = Array.from({ length: 6 }, (_, i) =>
      buildConversionEvent({ conversion: { id: 100 + i } }),
    )
    for (const event of before) expect(await deliver(receiving.url, event)).toBe(200)

    await replicated.cutLink()
    // More deliveries than the pool has connections, each commit waiting for a gone standby.
    const during = Array.from({ length: 8 }, (_, i) =>
      buildConversionEvent({ conversion: { id: 200 + i } }),
    )
    const answers = await timedDeliveries(receiving.url, during)
    for (const answer of answers) {
      expect(answer.status).toBe(503)
      expect(answer.ms).toBeLessThan(SERVICE_TIMEOUT_MS)
    }
    // Cancelled at the bound, not refused for want of a connection, and every connection back.
    expect(
      lines.filter((line) => line.includes('it may stand on the primary only')).length,
    ).toBeGreaterThan(0)
    await opened.ping()
    // A retry finds the mark on the primary, which no standby has: not acknowledged either.
    const retried = await timedDeliveries(receiving.url, [during[0] as object])
    expect(retried[0]?.status).toBe(503)

    replicated.killPrimary()
    await replicated.promote()
    proxy.moveTo(replicated.standby.port)

    // Every event again, as the service's retries and a replay would.
    for (const event of [...before, ...during]) {
      const statuses = await deliverUntilAcknowledged(() => receiving.url, event, { pauseMs: 100 })
      expect(statuses.at(-1)).toBe(200)
    }
    const counts = await applied(replicated.standby.url)
    for (const event of [...before, ...during]) expect(counts.get(event.id)).toBe(1)
  }, 60_000)
})

describe.each(DRIVERS)('a duplicate where the role may not emit a WAL message, $name', (driver) => {
  let server: PostgresServer

  beforeAll(async () => {
    server = await startPrivatePostgres()
    for (const statement of [
      'REVOKE EXECUTE ON FUNCTION pg_logical_emit_message(boolean, text, text) FROM PUBLIC',
      'REVOKE EXECUTE ON FUNCTION pg_logical_emit_message(boolean, text, bytea) FROM PUBLIC',
      'CREATE ROLE app LOGIN',
      'GRANT CREATE ON SCHEMA public TO app',
      'CREATE TABLE effects (event_id text NOT NULL, conversion_id bigint NOT NULL)',
      'GRANT INSERT ON effects TO app',
    ])
      await queryOnce(server.url, statement)
  }, 30_000)

  afterAll(async () => {
    await server?.destroy()
  })

  it('is answered 2xx from the mark, handled once (the wait for standbys is skipped, not a 503 for ever)', async () => {
    const log = capturedLog()
    const opened = driver.openOn(server.url.replace('postgres@', 'app@'), log.logger)
    const receiving = await receiver(opened, log.logger)
    try {
      const event = buildConversionEvent({ conversion: { id: 7 } })
      expect(await deliver(receiving.url, event)).toBe(200)
      expect(await deliver(receiving.url, event, 2)).toBe(200)
      expect((await applied(server.url)).get(event.id)).toBe(1)
    } finally {
      receiving.server.close()
      await opened.end().catch(() => {})
    }
  })
})

/**
 * Issue 59, Prisma on PostgreSQL: a COMMIT waits for the synchronous standbys
 * named in `synchronous_standby_names`, and with none answering it waits for
 * ever (statement_timeout does not reach it). A private server whose standby
 * ('nobody') never comes stands for a standby gone: each delivery is answered
 * 503 at the store's bound, its commit cancelled so that its connection goes
 * back to the client's pool (a pool of 3 serves more deliveries than that, and
 * a plain SELECT 1 after them); a redelivery of such an event, and a stale
 * event, wait for the standby too (503, never `duplicate` or `stale` from a
 * mark only the primary has). Once the requirement is lifted the redelivery is
 * a duplicate and the event's effect is there once. A role that may not run
 * pg_logical_emit_message still gets its duplicates answered 2xx.
 */
import { createReceiver, type EventStore } from '@affiliate-webhooks/core'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import { type PrismaRawQueries, prismaStore } from '@affiliate-webhooks/prisma'
import { PrismaPg } from '@prisma/adapter-pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PostgresServer, startPrivatePostgres } from '../support/postgres-db.js'
import { queryOnce } from '../support/postgres-failover.js'
import { type PrismaClientFor, prismaClientPath } from './prisma-clients.js'

const SECRET = 'whsec_prisma_sync'
/** The service gives up on an answer after 10 s. */
const SERVICE_TIMEOUT_MS = 10_000
const POOL_SIZE = 3

type Client = PrismaClientFor<PrismaRawQueries>

async function delivery(event: object, attempt = 1) {
  const signed = await signedDelivery({ secret: SECRET, event, attempt })
  return { headers: signed.headers, rawBody: new TextEncoder().encode(signed.body) }
}

function capturedLog() {
  const lines: string[] = []
  const keep = (...args: unknown[]) => lines.push(args.map(String).join(' '))
  return { lines, logger: { warn: keep, error: keep, info: keep } }
}

/** A receiver writing each event's effect through ctx.tx, and how long each answer took. */
function receiving(store: EventStore<unknown>) {
  const receiver = createReceiver({
    secret: SECRET,
    logger: false,
    store,
    async onConversion(conversion, event, ctx) {
      await (ctx.tx as PrismaRawQueries).$executeRawUnsafe(
        'INSERT INTO effects VALUES ($1, $2)',
        event.id,
        conversion.id,
      )
    },
  })
  return async (event: object, attempt = 1) => {
    const started = performance.now()
    const answer = await receiver.receive(await delivery(event, attempt))
    return { status: answer.status, outcome: answer.outcome, ms: performance.now() - started }
  }
}

/** How long a plain SELECT 1 takes on the client's pool, or Infinity past 2 s. */
async function pingMs(prisma: Client): Promise<number> {
  const started = performance.now()
  const late = new Promise<'late'>((resolve) => setTimeout(resolve, 2000, 'late').unref())
  const answered = await Promise.race([prisma.$queryRawUnsafe('SELECT 1'), late])
  return answered === 'late' ? Number.POSITIVE_INFINITY : performance.now() - started
}

const effectsOf = async (url: string, eventId: string) =>
  Number(
    (
      await queryOnce<{ n: number }>(
        url,
        'SELECT count(*)::int AS n FROM effects WHERE event_id = $1',
        [eventId],
      )
    )[0]?.n,
  )

const setStandbys = async (url: string, value: string | undefined) => {
  await queryOnce(
    url,
    value === undefined
      ? 'ALTER SYSTEM RESET synchronous_standby_names'
      : `ALTER SYSTEM SET synchronous_standby_names = '${value}'`,
  )
  await queryOnce(url, 'SELECT pg_reload_conf()')
}

describe('prismaStore (PostgreSQL) with a synchronous standby that never answers', () => {
  let server: PostgresServer
  let prisma: Client
  let PrismaClient: new (options: { adapter: PrismaPg }) => Client
  const log = capturedLog()
  let store: EventStore<unknown>
  let deliver: ReturnType<typeof receiving>
  const cut = Array.from({ length: 2 * POOL_SIZE }, (_, i) =>
    buildConversionEvent({ conversion: { id: 500 + i } }),
  )

  beforeAll(async () => {
    ;({ PrismaClient } = await import(await prismaClientPath('postgresql')))
    server = await startPrivatePostgres()
    await queryOnce(
      server.url,
      'CREATE TABLE effects (event_id text NOT NULL, conversion_id bigint NOT NULL)',
    )
    prisma = new PrismaClient({
      adapter: new PrismaPg({ connectionString: server.url, max: POOL_SIZE }),
    })
    const made = prismaStore({ prisma, logger: log.logger, acquireTimeoutMs: 2000 })
    // Tables first: the store's DDL commits, like any, would wait for the standby.
    await made.ready()
    store = made as EventStore<unknown>
    deliver = receiving(store)
    await setStandbys(server.url, 'nobody')
  }, 60_000)

  afterAll(async () => {
    await prisma?.$disconnect().catch(() => {})
    await server?.destroy()
  })

  it('answers each delivery 503 within the 10 s, more deliveries than the pool has connections, and the pool still answers SELECT 1', async () => {
    // As many at once as the pool has connections: every one of them waits in its COMMIT.
    const burst = await Promise.all(cut.slice(0, POOL_SIZE).map((event) => deliver(event)))
    // Each one's commit was cancelled at the bound (not refused for want of a connection).
    expect(
      log.lines.filter((line) => line.includes('it may stand on the primary only')),
    ).not.toEqual([])
    expect(log.lines.join('\n')).not.toMatch(/cannot use/)
    expect(await pingMs(prisma)).toBeLessThan(1000)
    const answers = [...burst]
    for (const event of cut.slice(POOL_SIZE)) answers.push(await deliver(event))
    for (const answer of answers) {
      expect(answer.status).toBe(503)
      expect(answer.ms).toBeLessThan(SERVICE_TIMEOUT_MS)
    }
    const ping = await pingMs(prisma)
    console.log(
      `503s after ${answers.map((a) => Math.round(a.ms)).join(', ')} ms; SELECT 1 after them: ${Math.round(ping)} ms`,
    )
    expect(ping).toBeLessThan(1000)
    // Cancelled in its wait for the standby: committed on the primary alone.
    for (const event of cut) expect(await effectsOf(server.url, event.id)).toBe(1)
  }, 120_000)

  it('answers a redelivery of an event whose commit was cancelled 503 (its mark is on the primary only), and a stale event too', async () => {
    const event = cut[0] as { id: string; createdAt: string; data: { conversion: { id: number } } }
    const again = await deliver(event, 2)
    expect(again.status).toBe(503)
    expect(again.ms).toBeLessThan(SERVICE_TIMEOUT_MS)
    // Not refused: its commit waited for the standby until the store's bound.
    expect(again.ms).toBeGreaterThan(4000)
    await expect(
      store.begin({
        eventId: event.id,
        conversionId: event.data.conversion.id,
        order: Date.parse(event.createdAt),
        leaseMs: 5000,
      }),
    ).rejects.toThrow(/it may stand on the primary only/)
    // An older event of the same conversion: its stale mark's commit waits for the standby too.
    const started = performance.now()
    await expect(
      store.begin({
        eventId: 'evt_older_than_the_mark',
        conversionId: event.data.conversion.id,
        order: 1,
        leaseMs: 5000,
      }),
    ).rejects.toThrow(/it may stand on the primary only/)
    expect(performance.now() - started).toBeLessThan(SERVICE_TIMEOUT_MS)
    expect(await pingMs(prisma)).toBeLessThan(1000)
  }, 60_000)

  it('once the standby requirement is lifted, answers the redelivery duplicate, the effect there once', async () => {
    await setStandbys(server.url, undefined)
    const event = cut[0] as { id: string; createdAt: string; data: { conversion: { id: number } } }
    const again = await deliver(event, 3)
    expect(again).toMatchObject({ status: 200, outcome: 'duplicate' })
    expect(await effectsOf(server.url, event.id)).toBe(1)
    // The stale event answered 503 has its mark on the server now (its commit was cancelled, not undone).
    const judged = (eventId: string) =>
      store.begin({ eventId, conversionId: event.data.conversion.id, order: 1, leaseMs: 5000 })
    expect((await judged('evt_older_than_the_mark')).status).toBe('duplicate')
    expect((await judged('evt_older_still')).status).toBe('stale')
    const fresh = buildConversionEvent({ conversion: { id: 600 } })
    expect(await deliver(fresh)).toMatchObject({ status: 200, outcome: 'processed' })
  }, 30_000)
})

describe('prismaStore (PostgreSQL): a duplicate where the role may not emit a WAL message', () => {
  let server: PostgresServer
  let prisma: Client

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
    const { PrismaClient } = await import(await prismaClientPath('postgresql'))
    prisma = new PrismaClient({
      adapter: new PrismaPg({
        connectionString: server.url.replace('postgres@', 'app@'),
        max: POOL_SIZE,
      }),
    })
  }, 60_000)

  afterAll(async () => {
    await prisma?.$disconnect().catch(() => {})
    await server?.destroy()
  })

  it('is answered 2xx from the mark, handled once (the wait for standbys is skipped, not a 503 for ever)', async () => {
    const deliver = receiving(prismaStore({ prisma, logger: false }) as EventStore<unknown>)
    const event = buildConversionEvent({ conversion: { id: 7 } })
    expect(await deliver(event)).toMatchObject({ status: 200, outcome: 'processed' })
    expect(await deliver(event, 2)).toMatchObject({ status: 200, outcome: 'duplicate' })
    expect(await effectsOf(server.url, event.id)).toBe(1)
  }, 30_000)
})

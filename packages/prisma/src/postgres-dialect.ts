import type { BeginInput, PeekInput } from '@affiliate-webhooks/core'
import {
  NO_STREAK,
  STORE_STATEMENT_TIMEOUT_MS,
  STREAK_CODES_KEPT,
} from '@affiliate-webhooks/core/internal'
import type * as PostgresStore from '@affiliate-webhooks/postgres/internal'
import type { PeekRow, SetupDriver } from '@affiliate-webhooks/postgres/internal'
import type { ClaimVerdict, Dialect, DialectParts, SyncCommit } from './dialect.js'
import { boundedRun, databaseError, type PrismaRawQueries, within } from './prisma-client.js'

/** The Postgres store's statements and checks, imported when the store first runs. */
export type PostgresInternals = typeof PostgresStore

/** One statement through Prisma, bounded: its rows. */
const failureOf =
  (pg: PostgresInternals) =>
  (cause: unknown): Error =>
    pg.unreachable(
      'prismaStore: cannot use the PostgreSQL database of the Prisma client',
      "Check the connection settings of the client's adapter (new PrismaPg({ connectionString }))",
      cause,
    )

function setupDriver(parts: DialectParts, failure: (cause: unknown) => Error): SetupDriver {
  return {
    run: boundedRun(parts.prisma),
    async transaction(work) {
      await parts.prisma.$transaction((tx) => work(boundedRun(tx as PrismaRawQueries)), {
        maxWait: parts.acquireTimeoutMs,
        timeout: 4 * STORE_STATEMENT_TIMEOUT_MS,
      })
    },
    failure,
  }
}

/** What a pg `Client` is, as the cancel uses it (pg comes with @prisma/adapter-pg). */
interface PgClientLike {
  on(event: 'error', listener: () => void): unknown
  connect(): Promise<unknown>
  query<Row>(text: string, values: unknown[]): Promise<{ rows: Row[] }>
  end(): Promise<void>
}

/**
 * One statement on a session of its own, outside Prisma's pool: the cancel of
 * a COMMIT's wait must not need a connection of that pool, which the waiting
 * commits may hold every one of. Made from the connection settings
 * @prisma/adapter-pg keeps (its factory's `config`, which a pg Pool passed to it
 * also fills); undefined when the client's adapter has none, and the cancel then
 * runs on the pool. The settings are never printed.
 */
function outsidePool(prisma: DialectParts['prisma']) {
  const adapter = (prisma as { _engineConfig?: { adapter?: { config?: unknown } } })._engineConfig
    ?.adapter
  const config = adapter?.config
  if (typeof config !== 'object' || config === null) return undefined
  return async <Row>(text: string, values: unknown[]): Promise<Row[]> => {
    const { default: pg } = (await import('pg')) as unknown as {
      default: { Client: new (settings: object) => PgClientLike }
    }
    const client = new pg.Client({
      ...config,
      connectionTimeoutMillis: CANCEL_CONNECT_MS,
      query_timeout: CANCEL_CONNECT_MS,
    })
    client.on('error', () => {})
    try {
      await client.connect()
      return (await client.query<Row>(text, values)).rows
    } finally {
      await client.end().catch(() => {})
    }
  }
}

/** Longest wait for the cancel's own session, and for its statement. */
const CANCEL_CONNECT_MS = 1000

/**
 * The bounds of a COMMIT waiting for synchronous standbys (dialect.ts
 * SyncCommit), through Prisma's raw queries: the cancel runs as another
 * session of the same role, outside the client's pool when the adapter's
 * settings can be read (outsidePool), on the pool otherwise. `sync()` is the pinned
 * synchronous_commit, known once the dialect is ready.
 */
function syncCommit(
  pg: PostgresInternals,
  prisma: DialectParts['prisma'],
  sync: () => string,
): SyncCommit {
  const run = boundedRun(prisma)
  const outside = outsidePool(prisma)
  return {
    async settle(tx, verdict) {
      const text =
        verdict === 'stale'
          ? pg.staleCommitStatementSql(sync())
          : pg.durableDuplicateStatementSql(sync())
      try {
        const rows = await boundedRun(tx)<{ xact: string }>(text)
        return String(rows[0]?.xact)
      } catch (error) {
        // The role may not write the duplicate's WAL record: answered from the mark as it stands.
        if (verdict === 'duplicate' && pg.isBarrierRefused(error)) return undefined
        throw error
      }
    },
    xactOf: (held) => pg.backendXid(held),
    async cancel(xact) {
      const rows = await (outside ?? run)<{ cancelled: boolean }>(pg.cancelSyncWaitSql, [xact])
      return rows[0]?.cancelled === true
    },
    graceMs: pg.CANCEL_GRACE_MS,
    notReplicated: () => pg.notReplicated('prismaStore', STORE_STATEMENT_TIMEOUT_MS),
  }
}

/**
 * The Postgres store's layout and statements (from `@affiliate-webhooks/postgres`)
 * through Prisma's raw queries: the same tables, functions and answers as with pg.
 */
export function postgresDialect(pg: PostgresInternals, parts: DialectParts): Dialect {
  const { prisma, timings } = parts
  const names = pg.schemaNames(parts, 'prismaStore')
  const failure = failureOf(pg)
  const run = boundedRun(prisma)
  // READ COMMITTED is the claim's assumption; asked of Prisma (one more round
  // trip per delivery) only when the database's default is another level.
  let isolation: 'ReadCommitted' | undefined
  let sync = 'NULL'
  return {
    sql: 'postgres',
    failure,
    async ready() {
      await pg.ensureSchema(setupDriver(parts, failure), names)
      sync = (await pg.readServerFacts(run, names)).sync
      const rows = await run<{ level: string }>(
        "SELECT current_setting('default_transaction_isolation') AS level",
      )
      isolation = rows[0]?.level === 'read committed' ? undefined : 'ReadCommitted'
    },
    replicationWarning: () => pg.replicationCheck(run, 'prismaStore'),
    syncCommit: syncCommit(pg, prisma, () => sync),
    transactionOptions: () => (isolation === undefined ? {} : { isolationLevel: isolation }),
    claimWaitMs: Math.max(STORE_STATEMENT_TIMEOUT_MS, timings.lockWaitMs + 1000),
    async claim(tx, input: BeginInput, leaseMs): Promise<ClaimVerdict> {
      let rows: { verdict: string }[]
      try {
        rows = await tx.$queryRawUnsafe<{ verdict: string }[]>(
          pg.claimCallSql(names),
          `${leaseMs}`,
          input.eventId,
          input.conversionId ?? null,
          input.order,
          `${timings.lockWaitMs}ms`,
          timings.dedupeTtl,
          timings.orderingTtl,
          `${leaseMs + pg.SERVER_IDLE_MARGIN_MS}`,
        )
      } catch (error) {
        // Another live transaction holds the row past lockWaitMs: not ours to decide yet.
        if (pg.isLockNotAvailable(databaseError(error))) return { status: 'in_progress' }
        throw error
      }
      const verdict = String(rows[0]?.verdict)
      if (pg.TRANSACTION_ID.test(verdict)) return { status: 'claimed', held: verdict }
      return { status: verdict as 'duplicate' | 'stale' }
    },
    async beforeCommit(tx, _input, held) {
      // Signs the commit for the guard trigger and pins its synchronous_commit.
      await tx.$executeRawUnsafe(pg.heldSql(names, sync), held)
    },
    async beforeRollback() {},
    isAborted: (error) => pg.isAborted(databaseError(error)),
    isLeaseEnd: (error) => pg.isLeaseEnd(databaseError(error)),
    // AWLST: the held check found another transaction than the claim's (the handler ended it).
    isHandlerEnded: (error) => databaseError(error).code === 'AWLST',
    // PostgreSQL keeps a failed transaction open and aborted: it refuses what follows itself
    // (25P02), and a ROLLBACK TO SAVEPOINT brings it back. Gone only when the guard
    // trigger refused a COMMIT of the handler's: the server rolled the attempt back.
    goneReason: (error) =>
      pg.isEscapeRefused(databaseError(error))
        ? 'a COMMIT the store did not send, refused by the server: the whole attempt was rolled back'
        : undefined,
    async peek({ eventId, conversionId, order }: PeekInput) {
      const rows = await run<PeekRow>(pg.peekSql(names), [eventId, conversionId ?? null])
      return pg.peekVerdict(rows[0] as PeekRow, eventId, order)
    },
    async record(code) {
      if (code === null) {
        await within(prisma.$executeRawUnsafe(pg.streakResetSql(names)), STORE_STATEMENT_TIMEOUT_MS)
        return NO_STREAK
      }
      const rows = await run<{ count: number; codes: string }>(pg.streakSql(names), [
        code,
        STREAK_CODES_KEPT,
        timings.dedupeTtl,
      ])
      return pg.streakOf(rows[0] as { count: number; codes: string })
    },
    async prune(limit) {
      let deleted = 0
      for (const table of [names.events, names.conversions]) {
        deleted += await within(
          prisma.$executeRawUnsafe(pg.pruneSql(table, limit)),
          STORE_STATEMENT_TIMEOUT_MS,
        )
      }
      return deleted
    },
  }
}

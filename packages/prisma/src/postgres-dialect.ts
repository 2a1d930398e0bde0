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

/**
 * The bounds of a COMMIT waiting for synchronous standbys (dialect.ts
 * SyncCommit), through Prisma's raw queries: the cancel runs on the client's
 * pool, as another session of the same role. `sync()` is the pinned
 * synchronous_commit, known once the dialect is ready.
 */
function syncCommit(
  pg: PostgresInternals,
  prisma: DialectParts['prisma'],
  sync: () => string,
): SyncCommit {
  const run = boundedRun(prisma)
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
      const rows = await run<{ cancelled: boolean }>(pg.cancelSyncWaitSql, [xact])
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
      const rows = await run<{ count: number; codes: string[] }>(pg.streakSql(names), [
        code,
        STREAK_CODES_KEPT,
        timings.dedupeTtl,
      ])
      const row = rows[0] as { count: number; codes: string[] }
      return { count: Number(row.count), recentCodes: row.codes }
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

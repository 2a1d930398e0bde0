/**
 * Semi-synchronous replication on MySQL and MariaDB, through Prisma: what the
 * MySQL store does around each commit (`@affiliate-webhooks/mysql`'s
 * replication.ts), run in the delivery's own Prisma transaction. A wait for a
 * replica that passes the bound is ended by a KILL of the session from another
 * of the client's connections (Prisma cannot cancel a statement), so the
 * connection leaves the pool rather than wait out `rpl_semi_sync_master_timeout`.
 */
import type { Logger } from '@affiliate-webhooks/core'
import { STORE_STATEMENT_TIMEOUT_MS } from '@affiliate-webhooks/core/internal'
import type * as MysqlStore from '@affiliate-webhooks/mysql/internal'
import type { SemiSyncReader, SemiSyncStatus } from '@affiliate-webhooks/mysql/internal'
import { boundedRun, type PrismaRawQueries } from './prisma-client.js'

type MysqlInternals = typeof MysqlStore

/**
 * The wait for a replica's acknowledgement is ended this long after the
 * statement is sent: before the store's own bound on the step (its
 * STORE_STATEMENT_TIMEOUT_MS), so the answer is the 503 that says why.
 */
export const ACK_BOUND_MS = STORE_STATEMENT_TIMEOUT_MS - 1000

/** What the dialect keeps of the server's replication, learnt at ready(). */
export interface SemiSyncState {
  /** Semi-sync on at start: how its status is read. Undefined: not checked. */
  reader: SemiSyncReader | undefined
  /** Found off on the server reached now: said once, until it is on again. */
  off: boolean
  /** The warning to say once at start, if any. */
  warning: string | undefined
}

/** Reads the replication facts at start: whether commits are checked, and the warning. */
export async function learnSemiSync(
  my: MysqlInternals,
  prisma: PrismaRawQueries,
  state: SemiSyncState,
): Promise<void> {
  let facts: Awaited<ReturnType<MysqlInternals['readReplicationFacts']>>
  try {
    facts = await my.readReplicationFacts(boundedRun(prisma))
  } catch (error) {
    state.warning = my.statusRefusedWarning('prismaStore', error)
    return
  }
  state.reader = facts.semiSyncEnabled === true ? facts.reader : undefined
  state.warning = my.replicationWarning(facts, 'prismaStore', STORE_STATEMENT_TIMEOUT_MS)
}

/** The status on the transaction's session, and the session's id (for the KILL); undefined when not checked. */
async function statusOn(
  my: MysqlInternals,
  tx: PrismaRawQueries,
  state: SemiSyncState,
  logger: Logger | undefined,
): Promise<(SemiSyncStatus & { session: number }) | undefined> {
  const reader = state.reader
  if (reader === undefined) return undefined
  let rows: { name: string; value: unknown }[]
  try {
    rows = await boundedRun(tx)<{ name: string; value: unknown }>(
      `${my.semiSyncStatusSql(reader)} UNION ALL SELECT 'session', CONNECTION_ID()`,
    )
  } catch (error) {
    const code = (error as { code?: unknown }).code
    // The server refused the statement (a number of its own): not checked from now on.
    if (typeof code !== 'string' || !/^\d+$/.test(code)) throw error
    state.reader = undefined
    logger?.warn(my.statusRefusedWarning('prismaStore', error))
    return undefined
  }
  const status = my.semiSyncStatusOf(rows)
  if (!status.enabled && !state.off)
    logger?.warn(my.semiSyncOffWarning('prismaStore', reader.spelling))
  state.off = !status.enabled
  if (!status.enabled) return undefined
  const session = Number(rows.find((row) => row.name === 'session')?.value)
  return { ...status, session }
}

/**
 * `work` (a statement whose commit waits for a replica), its session killed
 * from another connection if it has not answered within ACK_BOUND_MS. Throws
 * what `work` throws (the killed session's error).
 */
async function killedPastBound<T>(
  prisma: PrismaRawQueries,
  session: number,
  work: () => Promise<T>,
): Promise<{ value: T } | { killed: unknown }> {
  let late = false
  const timer = setTimeout(() => {
    late = true
    prisma.$executeRawUnsafe(`KILL CONNECTION ${Number(session)}`).catch(() => {
      // Gone already, or the server is unreachable: it ends the session itself.
    })
  }, ACK_BOUND_MS)
  try {
    return { value: await work() }
  } catch (error) {
    if (late) return { killed: error }
    throw error
  } finally {
    clearTimeout(timer)
  }
}

/**
 * The commit of a claim (`commit`, the store's CALL), checked: with semi-sync
 * on, no replica connected rolls the delivery back (`rollBack`, the store's
 * release CALL) and a commit not acknowledged within the bound is a 503.
 * Returns what `commit` returned.
 */
export async function replicatedCommit<T>(
  my: MysqlInternals,
  parts: { prisma: PrismaRawQueries; tx: PrismaRawQueries; logger: Logger | undefined },
  state: SemiSyncState,
  commit: () => Promise<T>,
  rollBack: () => Promise<unknown>,
): Promise<T> {
  const before = await statusOn(my, parts.tx, state, parts.logger)
  if (before === undefined) return commit()
  const spelling = state.reader?.spelling ?? 'master'
  if (!my.canAcknowledge(before)) {
    await rollBack()
    throw my.notReplicated('prismaStore', spelling, false)
  }
  const done = await killedPastBound(parts.prisma, before.session, commit)
  if ('killed' in done) throw my.notReplicated('prismaStore', spelling, true)
  const after = await statusOn(my, parts.tx, state, parts.logger)
  if (after !== undefined && !my.acknowledged(before, after)) {
    throw my.notReplicated('prismaStore', spelling, true)
  }
  return done.value
}

/**
 * A `duplicate` or `stale` verdict's answer rests on a mark a replica must
 * have: a one-row write after it, committed and acknowledged, stands behind it
 * (the binary log is in commit order). Throws the 503 when none acknowledged.
 */
export async function replicatedAnswer(
  my: MysqlInternals,
  parts: { prisma: PrismaRawQueries; tx: PrismaRawQueries; logger: Logger | undefined },
  state: SemiSyncState,
  streakTable: string,
): Promise<void> {
  const before = await statusOn(my, parts.tx, state, parts.logger)
  if (before === undefined) return
  const spelling = state.reader?.spelling ?? 'master'
  if (!my.canAcknowledge(before)) throw my.notReplicated('prismaStore', spelling, true)
  const run = boundedRun(parts.tx)
  const done = await killedPastBound(parts.prisma, before.session, async () => {
    await run(my.barrierSql(streakTable))
    await run('COMMIT')
  })
  if ('killed' in done) throw my.notReplicated('prismaStore', spelling, true)
  const after = await statusOn(my, parts.tx, state, parts.logger)
  if (after !== undefined && !my.acknowledged(before, after)) {
    throw my.notReplicated('prismaStore', spelling, true)
  }
}

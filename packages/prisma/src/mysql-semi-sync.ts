/**
 * Semi-synchronous replication on MySQL and MariaDB, through Prisma: what the
 * MySQL store does around each commit (`@affiliate-webhooks/mysql`'s
 * replication.ts), run in the delivery's own Prisma transaction. A wait for a
 * replica that passes the bound is ended by a KILL QUERY from a session the
 * dialect keeps (Prisma cannot cancel a statement, and every connection of its
 * pool may be waiting): the commit stands unacknowledged (a 503), and the
 * connection goes back to the pool rather than wait out
 * `rpl_semi_sync_master_timeout`.
 */
import type { Logger } from '@affiliate-webhooks/core'
import { STORE_STATEMENT_TIMEOUT_MS } from '@affiliate-webhooks/core/internal'
import type * as MysqlStore from '@affiliate-webhooks/mysql/internal'
import type { SemiSyncReader, SemiSyncStatus } from '@affiliate-webhooks/mysql/internal'
import { boundedRun, type PrismaClientLike, type PrismaRawQueries } from './prisma-client.js'

type MysqlInternals = typeof MysqlStore

/**
 * The wait for a replica's acknowledgement is ended this long after the
 * statement is sent: before the store's own bound on the step (its
 * STORE_STATEMENT_TIMEOUT_MS), so the answer is the 503 that says why.
 */
export const ACK_BOUND_MS = STORE_STATEMENT_TIMEOUT_MS - 1000

/** What the checks run on: the delivery's transaction, and the control session for a KILL. */
export interface SemiSyncParts {
  control: ControlSession
  tx: PrismaRawQueries
  logger: Logger | undefined
}

/** What the dialect keeps of the server's replication, learnt at ready(). */
export interface SemiSyncState {
  /** Semi-sync on at start: how its status is read. Undefined: not checked. */
  reader: SemiSyncReader | undefined
  /** Found off on the server reached now: said once. */
  off: boolean
  /** The last check found no replica acknowledging: the answer streak is not written meanwhile. */
  away: boolean
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
  // Turned off, or another server after a failover: not checked while it is off, said once.
  if (!status.enabled && !state.off) {
    state.off = true
    logger?.warn(my.semiSyncOffWarning('prismaStore', reader.spelling))
  }
  const session = Number(rows.find((row) => row.name === 'session')?.value)
  return { ...status, session }
}

/** The status before a step that is to be checked: undefined when it is not (off now, refused, or never on). */
async function checkedBefore(
  my: MysqlInternals,
  parts: SemiSyncParts,
  state: SemiSyncState,
): Promise<(SemiSyncStatus & { session: number }) | undefined> {
  const before = await statusOn(my, parts.tx, state, parts.logger)
  return before?.enabled === true ? before : undefined
}

/** Whether the commit since `before` was acknowledged; notes whether replicas are away. */
async function acknowledgedSince(
  my: MysqlInternals,
  parts: SemiSyncParts,
  state: SemiSyncState,
  before: SemiSyncStatus,
): Promise<boolean> {
  const after = await statusOn(my, parts.tx, state, parts.logger)
  const ok = after === undefined || my.acknowledged(before, after)
  state.away = !ok
  return ok
}

/** How often the control session proves it is alive (and keeps `wait_timeout` from ending it). */
const CONTROL_PING_MS = 60_000

/** The longest an interactive transaction may stay open (setTimeout's limit). */
const CONTROL_LIFETIME_MS = 2 ** 31 - 1

/**
 * A session the dialect keeps for the KILL of a commit past its bound: one
 * interactive transaction of the client's, held open with nothing in it (it
 * takes no lock and reads nothing). The waiting commits may hold every other
 * connection of the pool, and a KILL sent through the pool would wait behind
 * them until the primary's own timeout. Kept only while semi-sync is checked;
 * opened again when the server ends it; the pool's KILL when it is not there.
 */
export class ControlSession {
  #tx: PrismaRawQueries | undefined
  #opening: Promise<void> | undefined
  #end: (() => void) | undefined
  #done: Promise<unknown> = Promise.resolve()
  #ping: ReturnType<typeof setInterval> | undefined
  #closed = false

  constructor(private readonly prisma: PrismaClientLike) {}

  /** Opens the session (once; again after the server ended it). Never throws. */
  open(): Promise<void> {
    if (this.#closed || this.#tx !== undefined) return Promise.resolve()
    this.#opening ??= new Promise<void>((ready) => {
      const ended = new Promise<void>((end) => {
        this.#end = end
      })
      this.#done = this.prisma
        .$transaction(
          async (tx) => {
            this.#tx = tx as PrismaRawQueries
            ready()
            await ended
          },
          { maxWait: STORE_STATEMENT_TIMEOUT_MS, timeout: CONTROL_LIFETIME_MS },
        )
        .catch(() => {})
        .finally(() => {
          this.#tx = undefined
          this.#opening = undefined
          ready()
        })
    })
    this.#ping ??= setInterval(() => this.#alive(), CONTROL_PING_MS)
    this.#ping.unref()
    return this.#opening
  }

  async #alive(): Promise<void> {
    const tx = this.#tx
    if (tx === undefined) return void this.open()
    try {
      await boundedRun(tx)('SELECT 1')
    } catch {
      this.#end?.()
    }
  }

  /**
   * KILL QUERY `session`, on the control session when it is there. Never
   * throws. The statement's wait for a replica ends (the commit stands, not
   * acknowledged) and the session lives on: Prisma ends its transaction and the
   * connection goes back to the pool (a KILL CONNECTION left it counted active).
   */
  async kill(session: number): Promise<void> {
    const sql = `KILL QUERY ${Number(session)}`
    const tx = this.#tx
    try {
      if (tx !== undefined) return void (await boundedRun(tx)(sql))
    } catch {
      // The control session is gone: ended, and opened again below.
      this.#end?.()
      void this.open()
    }
    await this.prisma.$executeRawUnsafe(sql).catch(() => {
      // Gone already, or the server is unreachable: it ends the session itself.
    })
  }

  /** Ends the session (before the client disconnects). */
  async close(): Promise<void> {
    this.#closed = true
    clearInterval(this.#ping)
    this.#end?.()
    await this.#done
  }
}

/**
 * `work` (a statement whose commit waits for a replica), its session killed
 * from the control session if it has not answered within `boundMs`. Throws
 * what `work` throws before the bound.
 */
async function killedPastBound<T>(
  control: ControlSession,
  session: number,
  work: () => Promise<T>,
  boundMs = ACK_BOUND_MS,
): Promise<{ value: T } | { killed: unknown }> {
  let late = false
  const timer = setTimeout(() => {
    late = true
    void control.kill(session)
  }, boundMs)
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
 * `work` in a transaction of its own on the client's pool, its session killed
 * from the control session if it has not ended within `ACK_BOUND_MS` of the
 * call ({ killed }); a connection that comes after the bound runs nothing, and
 * the call throws. For the store's writes outside a
 * delivery (the answer streak, a prune round): with semi-sync checked their
 * commit waits for a replica as a delivery's does, and would otherwise hold
 * its connection until `rpl_semi_sync_master_timeout`, while deliveries wait
 * for one.
 */
export async function killableTransaction<T>(
  prisma: PrismaClientLike,
  control: ControlSession,
  maxWait: number,
  work: (tx: PrismaRawQueries) => Promise<T>,
): Promise<{ value: T } | { killed: unknown }> {
  let session: number | undefined
  let late = false
  let killed = false
  const timer = setTimeout(() => {
    late = true
    if (session === undefined) return
    killed = true
    void control.kill(session)
  }, ACK_BOUND_MS)
  try {
    const value = await prisma.$transaction(
      async (raw) => {
        const tx = raw as PrismaRawQueries
        const rows = await boundedRun(tx)<{ id: unknown }>('SELECT CONNECTION_ID() AS id')
        session = Number(rows[0]?.id)
        // A connection that came after the bound: nothing written, not a replica's doing.
        if (late) throw new Error('prismaStore: no connection within the bound')
        return work(tx)
      },
      { maxWait, timeout: STORE_STATEMENT_TIMEOUT_MS },
    )
    return { value }
  } catch (error) {
    if (killed) return { killed: error }
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
  parts: SemiSyncParts,
  state: SemiSyncState,
  commit: () => Promise<T>,
  rollBack: () => Promise<unknown>,
): Promise<T> {
  const before = await checkedBefore(my, parts, state)
  if (before === undefined) return commit()
  const spelling = state.reader?.spelling ?? 'master'
  if (!my.canAcknowledge(before)) {
    state.away = true
    await rollBack()
    throw my.notReplicated('prismaStore', spelling, false)
  }
  const done = await killedPastBound(parts.control, before.session, commit)
  if ('killed' in done) {
    state.away = true
    throw my.notReplicated('prismaStore', spelling, true)
  }
  if (!(await acknowledgedSince(my, parts, state, before))) {
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
  parts: SemiSyncParts,
  state: SemiSyncState,
  streakTable: string,
): Promise<void> {
  const before = await checkedBefore(my, parts, state)
  if (before === undefined) return
  const spelling = state.reader?.spelling ?? 'master'
  if (!my.canAcknowledge(before)) {
    state.away = true
    throw my.notReplicated('prismaStore', spelling, true)
  }
  const run = boundedRun(parts.tx)
  const done = await killedPastBound(parts.control, before.session, async () => {
    await run(my.barrierSql(streakTable))
    await run('COMMIT')
  })
  if ('killed' in done) {
    state.away = true
    throw my.notReplicated('prismaStore', spelling, true)
  }
  if (!(await acknowledgedSince(my, parts, state, before))) {
    throw my.notReplicated('prismaStore', spelling, true)
  }
}

/**
 * The claim's CALL, with semi-sync on: refused at once (503, nothing written)
 * when no replica can acknowledge, and its session killed past `boundMs` (a
 * stale mark's commit inside it may be waiting for a replica, and would hold
 * the connection until one came).
 */
export async function gatedClaim<T>(
  my: MysqlInternals,
  parts: SemiSyncParts,
  state: SemiSyncState,
  claim: () => Promise<T>,
  boundMs: number,
): Promise<T> {
  const before = await checkedBefore(my, parts, state)
  if (before === undefined) return claim()
  if (!my.canAcknowledge(before)) {
    state.away = true
    throw my.notReplicated('prismaStore', state.reader?.spelling ?? 'master', false)
  }
  const done = await killedPastBound(parts.control, before.session, claim, boundMs)
  if ('killed' in done) {
    throw new Error(
      `prismaStore: the claim did not answer within ${boundMs} ms (a row lock held that long, or a stale mark's commit waiting for a replica): its session was ended, nothing acknowledged`,
      { cause: done.killed },
    )
  }
  return done.value
}

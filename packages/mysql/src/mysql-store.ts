import { randomUUID } from 'node:crypto'
import {
  type BeginInput,
  type BeginResult,
  type Claim,
  type EventStore,
  type HeldEvent,
  type HeldResolution,
  type HeldResolved,
  type Logger,
  type PeekInput,
  type PeekResult,
  WebhookError,
} from '@affiliate-webhooks/core'
import {
  atMostEvery,
  checkAcquireTimeout,
  checkoutWithin,
  closer,
  type DatabaseEventStore,
  gatedStreak,
  handlerLeftAborted,
  NO_STREAK,
  type PooledStoreOptions,
  PRUNE_BATCH,
  PRUNE_EVERY_MS,
  pruneRound,
  resolveStoreTimings,
  STORE_STATEMENT_TIMEOUT_MS,
  STREAK_CODES_KEPT,
  takeOpenClaim,
} from '@affiliate-webhooks/core/internal'
import type { Pool, PoolConnection } from 'mysql2/promise'
import { connectionFailure, describeDatabase, isConnectionLost } from './errors.js'
import { type GuardState, guardedConnection, quoted } from './guard.js'
import { heldEventsOn, heldMessage, resolveHeldOn } from './held.js'
import {
  acknowledged,
  barrierSql,
  canAcknowledge,
  notReplicated,
  readReplicationFacts,
  replicationWarning,
  type SemiSyncReader,
  type SemiSyncStatus,
  semiSyncOffWarning,
  semiSyncStatusOf,
  semiSyncStatusSql,
  statusRefusedWarning,
} from './replication.js'
import { type MysqlSchemaOptions, type SchemaNames, schemaNames } from './schema.js'
import { ensureSchema } from './setup.js'
import {
  eventKey,
  type PeekRow,
  PRUNE_RESTORE_SQL,
  PRUNE_WAIT_SQL,
  PRUNED,
  peekSql,
  peekVerdict,
  pruneDeleteSql,
  pruneKeysSql,
} from './statements.js'

/** Options of {@link mysqlStore}. */
export interface MysqlStoreOptions extends PooledStoreOptions, MysqlSchemaOptions {
  /** A mysql2/promise `Pool`. The store takes one connection per delivery; it ends the pool only in `store.close()`. */
  pool: Pool
}

/**
 * The MySQL store: `ctx.tx` is the pool connection inside the delivery's
 * transaction. Beyond the receiver's steps, the held events: a claim whose
 * mark a statement of its handler committed (a COMMIT the store did not send)
 * is held, answered 500 `event_held`, until resolved here.
 */
export interface MysqlEventStore extends DatabaseEventStore<PoolConnection> {
  /** The held events (a consistent read of the store's tables; nothing printed). */
  heldEvents(): Promise<HeldEvent[]>
  /**
   * Resolves a held event: `'rerun'` puts its conversion's watermark back, so
   * its next delivery runs the handler again; `'accept'` counts it handled as
   * it is (its next delivery a duplicate). Throws if it is not held.
   */
  resolveHeld(eventId: string, resolution: HeldResolution): Promise<HeldResolved>
}

/** Longest wait for one of the store's own statements; past it the connection is dropped. */
const STATEMENT_TIMEOUT_MS = STORE_STATEMENT_TIMEOUT_MS

/** A claim's transaction: its connection, its lease, and whether it is over. */
interface Open {
  connection: PoolConnection
  claimedAt: number
  leaseMs: number
  timer: ReturnType<typeof setTimeout> | undefined
  /** The lease ran out and the store ended the session. */
  expired: boolean
  /** What ctx.tx's guard knows: settled or not, and a deadlock it saw. */
  guard: GuardState
  /** The connection failed while the handler ran. */
  ended: Error | undefined
  onError: (error: Error) => void
}

/** The store's shared machinery, built once by {@link mysqlStore}. */
interface Parts {
  pool: Pool
  names: SchemaNames
  timings: ReturnType<typeof resolveStoreTimings>
  acquire: () => Promise<PoolConnection>
  ready: () => Promise<void>
  fail: (error: unknown) => Error
  open: Map<string, Open>
  /** What ready() learnt of the server. */
  server: ServerTraits
  logger: Logger | undefined
  /** Held events named in the log already: once each per process. */
  heldLogged: Set<string>
}

/** How many held events the store remembers having logged (past it, it starts again). */
const HELD_LOGGED_KEPT = 10_000

/** Logs `message` for `eventId`'s hold, once per process. */
function logHeld(parts: Parts, eventId: string, message: string): void {
  if (parts.logger === undefined || parts.heldLogged.has(eventId)) return
  if (parts.heldLogged.size >= HELD_LOGGED_KEPT) parts.heldLogged.clear()
  parts.heldLogged.add(eventId)
  parts.logger.error(message)
}

/** How a held event is resolved, given the call's arguments. */
const RESOLVE = (args: string) => `store.resolveHeld(${args})`

/** What the store reads of the server once, at ready(). */
interface ServerTraits {
  /**
   * innodb_rollback_on_timeout (a startup option): a lock wait timeout (1205)
   * then rolls back the whole transaction, as a deadlock does, not only the statement.
   */
  rollbackOnTimeout: boolean
  /**
   * Semi-synchronous replication is on (read at start), spelt so: each mark's
   * commit, and each duplicate's or stale answer, is checked for a replica's
   * acknowledgement. Undefined: not checked (off, or the role may not read it).
   */
  semiSync: SemiSyncReader | undefined
  /** Semi-sync was found off on the server reached now (said once). */
  semiSyncOff: boolean
  /**
   * The last check found no replica acknowledging: the answer streak's write
   * (whose commit would wait for one too) is left to each process meanwhile.
   */
  replicaAway: boolean
}

/**
 * The first row of a CALL's first result set; undefined when the procedure
 * answered none (begin and commit in the common case: claimed, committed).
 */
async function call<Row>(
  connection: PoolConnection,
  sql: string,
  values: unknown[] = [],
): Promise<Row | undefined> {
  const [results] = await connection.query({ sql, values, timeout: STATEMENT_TIMEOUT_MS })
  // A result set and the CALL's own status; the status alone when there is none.
  if (!Array.isArray(results)) return undefined
  return ((results as unknown[])[0] as Row[])[0]
}

/** The first row of a CALL that always answers one. */
async function callRow<Row>(
  connection: PoolConnection,
  sql: string,
  values: unknown[] = [],
): Promise<Row> {
  const row = await call<Row>(connection, sql, values)
  if (row === undefined) throw new Error(`mysqlStore: ${sql} answered no row`)
  return row
}

/** Runs `work` on a connection of its own, returned to the pool after, dropped if it failed. */
async function withConnection<T>(
  parts: Parts,
  work: (connection: PoolConnection) => Promise<T>,
): Promise<T> {
  await parts.ready()
  const connection = await parts.acquire()
  let result: T
  try {
    result = await work(connection)
  } catch (error) {
    // Past its bound the session is killed too: its commit may wait for a replica.
    dropConnection(parts, connection, timedOut(error))
    throw parts.fail(error)
  }
  connection.release()
  return result
}

/**
 * Ends a claim whose lease ran out: the server rolls back, and frees its row,
 * as the connection closes. The claim leaves the map: a handler that never
 * settles leaves nothing behind, and its late commit or release finds nothing.
 */
function expire(parts: Parts, token: string): void {
  const state = parts.open.get(token)
  if (state === undefined || state.expired) return
  state.expired = true
  state.guard.over = true
  parts.open.delete(token)
  state.connection.connection.off('error', state.onError)
  drop(parts, state, state.guard.running > 0)
}

/**
 * Drops a claim's connection: the server rolls back, and frees its locks, once
 * it sees the socket closed. A statement still running there (a lock wait, a
 * long query) keeps the server from looking until it ends, so then the
 * session is also ended by a KILL from another connection (same user: no
 * privilege needed), not awaited: the answer does not wait on it.
 */
function drop(parts: Parts, state: Open, busy: boolean): void {
  dropConnection(parts, state.connection, busy)
}

/** {@link drop} for any connection of the store's. */
function dropConnection(parts: Parts, connection: PoolConnection, busy: boolean): void {
  const { threadId } = connection
  connection.destroy()
  if (!busy || typeof threadId !== 'number') return
  withConnection(parts, (connection) =>
    connection.query({ sql: `KILL CONNECTION ${threadId}`, timeout: STATEMENT_TIMEOUT_MS }),
  ).catch(() => {
    // Gone already (1094), or the server is unreachable: it ends the session itself.
  })
}

/** The store's CALL on a claim's connection got no answer within its bound. */
class SettleTimeout extends Error {}

/**
 * A statement of the store's past its bound: {@link SettleTimeout}, or mysql2's
 * own timeout (the same bound, started when the statement was sent), whichever came first.
 */
const timedOut = (error: unknown): boolean =>
  error instanceof SettleTimeout ||
  (error as { code?: unknown } | undefined)?.code === 'PROTOCOL_SEQUENCE_TIMEOUT'

/**
 * Runs the store's own CALL on a claim's connection, waiting at most
 * STATEMENT_TIMEOUT_MS from now. mysql2 sends it only after the statements the
 * handler left running (not awaited) there, and starts its own timeout then:
 * without this bound commit and release would wait as long as those do.
 */
async function settleWithin<T>(run: () => Promise<T>): Promise<T> {
  const pending = run()
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new SettleTimeout(`no answer within ${STATEMENT_TIMEOUT_MS} ms`)),
      STATEMENT_TIMEOUT_MS,
    )
  })
  try {
    return await Promise.race([pending, late])
  } finally {
    clearTimeout(timer)
    // Rejected once the connection is dropped: nobody waits for it any more.
    pending.catch(() => {})
  }
}

/**
 * The primary's semi-sync status, read on `connection`; undefined when it is
 * not checked. A server that refuses the statement (a role without the
 * privilege) turns the check off, said once; a lost connection throws.
 */
async function semiSyncNow(
  parts: Parts,
  connection: PoolConnection,
): Promise<SemiSyncStatus | undefined> {
  const { server } = parts
  const reader = server.semiSync
  if (reader === undefined) return undefined
  let status: SemiSyncStatus
  try {
    const [rows] = await connection.query({
      sql: semiSyncStatusSql(reader),
      timeout: STATEMENT_TIMEOUT_MS,
    })
    status = semiSyncStatusOf(rows as Parameters<typeof semiSyncStatusOf>[0])
  } catch (error) {
    // The server answered with an error of its own (it has a SQLSTATE): refused.
    if ((error as { sqlState?: unknown }).sqlState === undefined) throw error
    if (server.semiSync !== undefined) {
      server.semiSync = undefined
      parts.logger?.warn(statusRefusedWarning('mysqlStore', error))
    }
    return undefined
  }
  // Turned off, or another server after a failover: not checked while it is off, said once.
  if (!status.enabled && !server.semiSyncOff) {
    server.semiSyncOff = true
    parts.logger?.warn(semiSyncOffWarning('mysqlStore', reader.spelling))
  }
  return status
}

/**
 * The status before a commit that is to be checked: undefined when it is not
 * (semi-sync not on at start, refused, or off now: then it is not checked).
 */
async function checkedBefore(
  parts: Parts,
  connection: PoolConnection,
): Promise<SemiSyncStatus | undefined> {
  const before = await semiSyncNow(parts, connection)
  return before?.enabled === true ? before : undefined
}

/**
 * Whether the commit between `before` and now was acknowledged (a status the
 * server refuses now counts as not checked); notes whether replicas are away.
 */
async function acknowledgedSince(
  parts: Parts,
  connection: PoolConnection,
  before: SemiSyncStatus,
): Promise<boolean> {
  const after = await semiSyncNow(parts, connection)
  const ok = after === undefined || acknowledged(before, after)
  parts.server.replicaAway = !ok
  return ok
}

/** A duplicate's or stale answer, checked: `ok`, or why no replica stands behind it. */
type Replicated = 'ok' | 'no replica' | 'not acknowledged'

/**
 * What a `duplicate` or `stale` answer rests on (a mark committed before, by
 * this delivery's claim or by an earlier one whose commit went unacknowledged)
 * is on a replica once a later commit is acknowledged: the binary log is in
 * commit order, and a replica acknowledges a position. So a one-row write is
 * committed, bounded, and checked like a mark's commit.
 */
async function replicatedAnswer(parts: Parts, connection: PoolConnection): Promise<Replicated> {
  const before = await checkedBefore(parts, connection)
  if (before === undefined) return 'ok'
  if (!canAcknowledge(before)) {
    parts.server.replicaAway = true
    return 'no replica'
  }
  await settleWithin(async () => {
    await connection.query({ sql: barrierSql(parts.names.streak), timeout: STATEMENT_TIMEOUT_MS })
    // The pool's sessions autocommit; this commits one that does not.
    await connection.query({ sql: 'COMMIT', timeout: STATEMENT_TIMEOUT_MS })
  })
  return (await acknowledgedSince(parts, connection, before)) ? 'ok' : 'not acknowledged'
}

/**
 * A `duplicate` or `stale` verdict's answer once a replica stands behind it:
 * the connection back to the pool (dropped, and its session killed, when it
 * failed or passed the bound), and a 503 when no replica acknowledged.
 */
async function answerReplicated(
  parts: Parts,
  connection: PoolConnection,
  status: string,
): Promise<BeginResult<PoolConnection>> {
  let replicated: Replicated
  try {
    replicated = await replicatedAnswer(parts, connection)
  } catch (error) {
    dropConnection(parts, connection, timedOut(error))
    if (timedOut(error)) {
      parts.server.replicaAway = true
      throw notReplicated('mysqlStore', parts.server.semiSync?.spelling ?? 'master', true)
    }
    throw parts.fail(error)
  }
  connection.release()
  if (replicated !== 'ok') {
    throw notReplicated('mysqlStore', parts.server.semiSync?.spelling ?? 'master', true)
  }
  return { status } as BeginResult<PoolConnection>
}

function beginStep(parts: Parts) {
  // InnoDB counts a row-lock wait in whole seconds: lockWaitMs, rounded up.
  const waitSeconds = Math.ceil(parts.timings.lockWaitMs / 1000)
  // The claim may wait that long on purpose.
  const claimTimeoutMs = Math.max(STATEMENT_TIMEOUT_MS, waitSeconds * 1000 + 1000)
  return async ({
    eventId,
    conversionId,
    order,
    leaseMs = parts.timings.leaseMs,
  }: BeginInput): Promise<BeginResult<PoolConnection>> => {
    await parts.ready()
    const connection = await parts.acquire()
    // The server's own bound, for a process too stuck to run its timer: a
    // session idle past the lease (and a second) is ended by the server.
    const leaseSeconds = Math.ceil(leaseMs / 1000) + 1
    // The claim's marker in its row: only the store's commit clears it.
    const token = randomUUID()
    let verdict: { verdict: string; held_event?: unknown } | undefined
    try {
      const [results] = await connection.query({
        sql: `CALL ${parts.names.claim}(?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        values: [
          eventKey(eventId),
          conversionId ?? null,
          order,
          leaseSeconds,
          waitSeconds,
          parts.timings.dedupeTtl,
          parts.timings.orderingTtl,
          // Autocommit off while the handler runs (see the claim procedure).
          1,
          token,
        ],
        timeout: claimTimeoutMs,
      })
      // A result set and the CALL's own status; the status alone when it claimed.
      if (Array.isArray(results)) {
        verdict = ((results as unknown[])[0] as (typeof verdict)[])[0]
      }
    } catch (error) {
      // Past its bound the session is killed too: a stale mark's commit may
      // be waiting for a replica, and would hold a server thread until it came.
      dropConnection(parts, connection, timedOut(error))
      throw parts.fail(error)
    }
    if (verdict !== undefined) {
      // Answered 2xx from a mark: once a replica has it.
      if (verdict.verdict === 'duplicate' || verdict.verdict === 'stale')
        return answerReplicated(parts, connection, verdict.verdict)
      connection.release()
      if (verdict.verdict === 'held') throw heldError(parts, eventId, conversionId, verdict)
      return { status: verdict.verdict } as BeginResult<PoolConnection>
    }
    const state: Open = {
      connection,
      claimedAt: Date.now(),
      leaseMs,
      timer: undefined,
      expired: false,
      guard: {
        over: false,
        gone: undefined,
        running: 0,
        rollbackOnTimeout: parts.server.rollbackOnTimeout,
        escaped: undefined,
        sessionChanged: false,
      },
      ended: undefined,
      onError: () => {},
    }
    state.onError = (error) => {
      state.ended = error
    }
    // A checked-out connection the server ends emits 'error': keep it, for commit.
    connection.connection.on('error', state.onError)
    state.timer = setTimeout(() => expire(parts, token), leaseMs)
    state.timer.unref()
    parts.open.set(token, state)
    const tx = guardedConnection(connection, state.guard)
    return { status: 'claimed', claim: { eventId, conversionId, order, token, tx } }
  }
}

/** begin met a committed marker: 500 event_held, named in the log once. */
function heldError(
  parts: Parts,
  eventId: string,
  conversionId: string | number | undefined,
  verdict: { held_event?: unknown },
): WebhookError {
  const raw = verdict.held_event
  const held = Buffer.isBuffer(raw) ? raw.toString('utf8') : String(raw ?? eventId)
  const conversion = conversionId === undefined ? undefined : String(conversionId)
  const message = heldMessage('mysqlStore', eventId, held, conversion, RESOLVE)
  logHeld(parts, held, heldMessage('mysqlStore', held, held, conversion, RESOLVE))
  return new WebhookError('event_held', message)
}

/**
 * Whether the claim's marker is committed (its mark escaped the store's
 * commit), read after the claim's transaction ended: a consistent read of
 * its row, on a connection of its own.
 */
async function markKept(parts: Parts, claim: Claim<PoolConnection>): Promise<boolean> {
  const { conversionId } = claim
  const rows = await withConnection(parts, async (connection) => {
    const [result] = await connection.query({
      sql:
        conversionId === undefined
          ? `SELECT 1 AS k FROM ${parts.names.events} WHERE event_id = ? AND claim_token = ?`
          : `SELECT 1 AS k FROM ${parts.names.conversions} WHERE conversion_id = ? AND claim_token = ?`,
      values: [conversionId ?? eventKey(claim.eventId), claim.token],
      timeout: STATEMENT_TIMEOUT_MS,
    })
    return result as unknown[]
  })
  return rows.length > 0
}

/**
 * The claim's transaction ended under the handler (seen by ctx.tx, or by the
 * store's commit): what was kept, said truthfully, and the hold logged once.
 */
async function escapeReport(
  parts: Parts,
  claim: Claim<PoolConnection>,
  state: Open,
): Promise<WebhookError> {
  const statement = quoted(state.guard.escaped?.statement)
  const seen = state.guard.escaped === undefined ? 'a statement ctx.tx could not see' : statement
  const kept = await markKept(parts, claim).catch(() => undefined)
  const conversion = claim.conversionId === undefined ? undefined : String(claim.conversionId)
  if (kept === true) {
    const held = heldMessage('mysqlStore', claim.eventId, claim.eventId, conversion, RESOLVE)
    logHeld(parts, claim.eventId, `${held} The statement that ended the transaction: ${seen}.`)
    return new WebhookError(
      'handler_failed',
      `mysqlStore: the handler's statement ${seen} ended the delivery's transaction with a commit the store did not send: the writes before it and the event's handled mark were kept, nothing after it (the session's transactions after it are read only). The event is held: its retries${conversion === undefined ? '' : ` and newer events of conversion ${conversion}`} are answered 500 event_held until resolved with ${RESOLVE(`'${claim.eventId}', 'rerun' | 'accept'`)}. Let the store commit (return from the handler) or roll back (throw); run DDL at setup.`,
    )
  }
  const what =
    kept === false
      ? 'nothing the handler wrote was kept, nor the mark: the retry runs the handler again'
      : 'whether its mark was kept could not be read (the database is unreachable): the retry is answered 500 event_held if it was, and runs the handler again if not'
  return new WebhookError(
    'handler_failed',
    `mysqlStore: the delivery's transaction was ended before the store's commit by the handler's statement ${seen} (a COMMIT, ROLLBACK, START TRANSACTION or DDL, maybe inside a procedure or a compound statement), and the store committed nothing: ${what}. Let the store commit (return from the handler) or roll back (throw); run DDL at setup.`,
  )
}

/** Takes a claim's bookkeeping out of the map: it is being settled now. */
function settle(parts: Parts, claim: Claim<PoolConnection>): Open | undefined {
  const state = takeOpenClaim(parts.open, claim)
  if (state === undefined) return undefined
  state.guard.over = true
  clearTimeout(state.timer)
  state.connection.connection.off('error', state.onError)
  return state
}

/**
 * How the store ended a claim's transaction. `refused`: its commit found the
 * transaction not the claim's any more (or the handler had ended it: rolled
 * back). `unreplicated`: semi-sync is checked and no replica acknowledged:
 * `rolled back` (none could: nothing committed) or `committed` (the mark stands
 * on the primary alone).
 */
interface Ended {
  refused: boolean
  unreplicated?: 'rolled back' | 'committed'
}

/**
 * The store's commit of a claim, each step bounded: with semi-sync checked,
 * the status before (no replica to acknowledge: rolled back instead) and after.
 */
async function endClaim(parts: Parts, state: Open, claim: Claim<PoolConnection>): Promise<Ended> {
  const { connection } = state
  const rollBack = () => call(connection, `CALL ${parts.names.release}()`)
  // The server said the claim's transaction ended under the handler: no commit is sent.
  if (state.guard.escaped !== undefined) {
    await settleWithin(rollBack)
    return { refused: true }
  }
  const before = await settleWithin(() => checkedBefore(parts, connection))
  if (before !== undefined && !canAcknowledge(before)) {
    parts.server.replicaAway = true
    await settleWithin(rollBack)
    return { refused: false, unreplicated: 'rolled back' }
  }
  const refused = await settleWithin(() =>
    call<{ committed: number }>(connection, `CALL ${parts.names.commit}(?, ?, ?)`, [
      eventKey(claim.eventId),
      claim.conversionId ?? null,
      claim.token,
    ]),
  )
  if (refused !== undefined) return { refused: true }
  if (before === undefined) return { refused: false }
  if (await settleWithin(() => acknowledgedSince(parts, connection, before)))
    return { refused: false }
  return { refused: false, unreplicated: 'committed' }
}

function commitStep(parts: Parts, afterCommit: () => void) {
  return async (claim: Claim<PoolConnection>): Promise<boolean> => {
    const state = settle(parts, claim)
    // Committed or released already: a second commit changes nothing.
    if (state === undefined) return false
    const leaseOver = () => Date.now() - state.claimedAt >= state.leaseMs
    if (state.expired) return false
    // Statements the handler sent and did not await: the CALL queues behind them.
    const leftRunning = state.guard.running > 0
    let refused: Ended
    try {
      if (state.ended !== undefined) throw state.ended
      refused = await endClaim(parts, state, claim)
    } catch (error) {
      drop(parts, state, timedOut(error))
      // The server ended the session when the lease ran out: the transaction,
      // the handler's writes with it, rolled back, and the retry may run.
      if (isConnectionLost(error) && leaseOver() && !timedOut(error)) return false
      if (timedOut(error) && leftRunning) throw leftStatementRunning()
      // Past the bound with semi-sync on: most likely the wait for a replica.
      if (timedOut(error) && parts.server.semiSync !== undefined) {
        parts.server.replicaAway = true
        throw notReplicated('mysqlStore', parts.server.semiSync.spelling, true)
      }
      throw parts.fail(error)
    }
    handBack(state)
    if (refused.unreplicated !== undefined) {
      const spelling = parts.server.semiSync?.spelling ?? 'master'
      throw notReplicated('mysqlStore', spelling, refused.unreplicated === 'committed')
    }
    if (refused.refused) {
      if (state.guard.gone !== undefined) throw endedUnderHandler(state.guard.gone)
      throw await escapeReport(parts, claim, state)
    }
    afterCommit()
    return true
  }
}

/**
 * The handler returned while a statement it sent on ctx.tx still ran, and the
 * store's commit, sent after it, got no answer within its bound: the
 * connection was dropped, so the server rolled the delivery back. The
 * handler's failure (500), not the store's.
 */
function leftStatementRunning(): WebhookError {
  return new WebhookError(
    'handler_failed',
    `mysqlStore: the handler returned while a statement it sent on ctx.tx was still running (not awaited), and the store's commit, queued behind it, got no answer within ${STATEMENT_TIMEOUT_MS} ms: the connection was dropped and the delivery rolled back. Await every statement on ctx.tx before returning.`,
  )
}

/**
 * A claim's connection back to the pool once the store's CALL put the session
 * back; dropped instead when a statement of the handler changed the session
 * (a SET, a user variable): the next delivery, or the app, would inherit it.
 */
function handBack(state: Open): void {
  if (state.guard.sessionChanged) state.connection.destroy()
  else state.connection.release()
}

/**
 * InnoDB rolled the transaction back under the handler (a deadlock, or a lock
 * wait timeout under innodb_rollback_on_timeout) and it caught and went on.
 * Only the handler's statements ran on that connection, so it is the
 * handler's failure (500), not the store's.
 */
function endedUnderHandler(rolledBack: Error): WebhookError {
  return handlerLeftAborted(
    rolledBack,
    'retry the whole handler (throw): InnoDB rolled back every statement of the delivery, the claim with them',
  )
}

function releaseStep(parts: Parts) {
  return async (claim: Claim<PoolConnection>): Promise<void> => {
    const state = settle(parts, claim)
    if (state === undefined) return
    const { connection } = state
    if (state.expired || state.ended !== undefined) {
      connection.destroy()
      return
    }
    try {
      // Bounded from now: a statement the handler left running (a handler
      // that threw before awaiting all it sent) holds the connection.
      await settleWithin(() =>
        connection.query({ sql: `CALL ${parts.names.release}()`, timeout: STATEMENT_TIMEOUT_MS }),
      )
      handBack(state)
    } catch (error) {
      // A connection whose rollback failed is given to no one else: the server
      // rolls back and drops its locks when it closes.
      drop(parts, state, error instanceof SettleTimeout)
    }
    // The handler threw after ending its transaction: the hold, if its mark was kept, is logged.
    if (state.guard.escaped !== undefined) await escapeReport(parts, claim, state).catch(() => {})
  }
}

/** The answer streak is not written while no replica acknowledges: its commit would wait for one. */
class StreakDeferred extends Error {}

function streakStep(parts: Parts) {
  return gatedStreak(async (code) => {
    // Each process counts for itself meanwhile (the receiver's own count).
    if (parts.server.semiSync !== undefined && parts.server.replicaAway) {
      throw new StreakDeferred(
        'mysqlStore: no replica acknowledges; the streak is counted per process',
      )
    }
    const row = await withConnection(parts, (connection) =>
      callRow<{ failures: number; codes: string }>(
        connection,
        `CALL ${parts.names.recordAnswer}(?, ?, ?)`,
        [code, STREAK_CODES_KEPT, parts.timings.dedupeTtl],
      ),
    )
    const count = Number(row.failures)
    return count === 0 ? NO_STREAK : { count, recentCodes: row.codes.split(',') }
  })
}

function peekStep(parts: Parts) {
  return async ({ eventId, conversionId, order }: PeekInput): Promise<PeekResult> => {
    const key = eventKey(eventId)
    const row = await withConnection(parts, async (connection) => {
      const [rows] = await connection.query({
        sql: peekSql(parts.names),
        values: [key, key, conversionId ?? null],
        timeout: STATEMENT_TIMEOUT_MS,
      })
      return (rows as PeekRow[])[0]
    })
    return peekVerdict(row, order)
  }
}

/**
 * Expired marks and watermarks, at most `limit` of each. The expired keys are
 * found by a consistent read (no locks), then deleted by key and checked again
 * under the row lock, giving up after a second: a locking scan of the
 * expires_at index would wait on the fresh row of a claim in flight (InnoDB
 * locks the record past a range too), and hold up deliveries meanwhile.
 */
async function pruneTables(
  parts: Parts,
  connection: PoolConnection,
  limit: number,
): Promise<number> {
  let deleted = 0
  await connection.query(PRUNE_WAIT_SQL)
  try {
    for (const { table, key } of PRUNED(parts.names)) {
      const [rows] = await connection.query({
        sql: pruneKeysSql(table, key),
        values: [limit],
        timeout: STATEMENT_TIMEOUT_MS,
      })
      const keys = (rows as { k: unknown }[]).map((row) => row.k)
      if (keys.length === 0) continue
      try {
        const [result] = await connection.query({
          sql: pruneDeleteSql(table, key, keys.length),
          values: keys,
          timeout: STATEMENT_TIMEOUT_MS,
        })
        deleted += (result as { affectedRows: number }).affectedRows
      } catch (error) {
        // A row retaken by a claim in flight: left for the next round.
        if ((error as { errno?: number }).errno !== 1205) throw error
      }
    }
  } finally {
    await connection.query(PRUNE_RESTORE_SQL)
  }
  return deleted
}

function pruneStep(parts: Parts) {
  return async (limit = PRUNE_BATCH): Promise<number> => {
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw new TypeError(`mysqlStore: prune's \`limit\` must be a whole number >= 1; got ${limit}`)
    }
    return withConnection(parts, (connection) => pruneTables(parts, connection, limit))
  }
}

/** The error thrown to the receiver: names the database and the setting, never a secret. */
function failer(pool: Pool, logger: Logger | undefined) {
  let reportedAt = Number.NEGATIVE_INFINITY
  return (error: unknown): Error => {
    if (error instanceof Error && error.message.startsWith('mysqlStore:')) return error
    const failure = connectionFailure('mysqlStore', pool, error)
    // Once per outage (a minute), not once per delivery.
    const at = Date.now()
    if (logger !== undefined && isConnectionLost(error) && at - reportedAt >= PRUNE_EVERY_MS) {
      reportedAt = at
      logger.error(failure.message)
    }
    return failure
  }
}

/** ready(): the schema once per process, and what the store must know of the server; tried again on the next call after a failure. */
function readyStep(
  names: SchemaNames,
  acquire: () => Promise<PoolConnection>,
  fail: Parts['fail'],
  server: ServerTraits,
  logger: Logger | undefined,
) {
  let setup: Promise<void> | undefined
  return () => {
    setup ??= (async () => {
      const connection = await acquire()
      try {
        await ensureSchema(
          async <Row>(sql: string, values?: unknown[]) =>
            (await connection.query(sql, values))[0] as Row[],
          names,
        )
        server.rollbackOnTimeout = await rollsBackOnTimeout(connection)
        await learnReplication(runOn(connection), server, logger)
      } catch (error) {
        connection.destroy()
        throw fail(error)
      }
      connection.release()
    })().catch((error: unknown) => {
      setup = undefined
      throw error
    })
    return setup
  }
}

/**
 * Whether each commit is checked for a replica's acknowledgement, and the one
 * warning at start when a failover can lose acknowledged conversions. A server
 * that refuses to say leaves the check off, said once.
 */
async function learnReplication(
  run: ReturnType<typeof runOn>,
  server: ServerTraits,
  logger: Logger | undefined,
): Promise<void> {
  let facts: Awaited<ReturnType<typeof readReplicationFacts>>
  try {
    facts = await readReplicationFacts(run)
  } catch (error) {
    if ((error as { sqlState?: unknown }).sqlState === undefined) throw error
    logger?.warn(statusRefusedWarning('mysqlStore', error))
    return
  }
  server.semiSync = facts.semiSyncEnabled === true ? facts.reader : undefined
  const line = replicationWarning(facts, 'mysqlStore', STATEMENT_TIMEOUT_MS)
  if (line !== undefined) logger?.warn(line)
}

/** One connection's statements, as the held-event functions run them. */
const runOn =
  (connection: PoolConnection) =>
  async <Row>(sql: string, values?: unknown[]) =>
    (await connection.query({ sql, values, timeout: STATEMENT_TIMEOUT_MS }))[0] as Row[]

/** resolveHeld on a connection of its own, in one READ WRITE transaction. */
function resolveHeld(
  parts: Parts,
  eventId: string,
  resolution: HeldResolution,
): Promise<HeldResolved> {
  return withConnection(parts, async (connection) => {
    const run = runOn(connection)
    await run('SET TRANSACTION ISOLATION LEVEL READ COMMITTED')
    await run('START TRANSACTION READ WRITE')
    try {
      const resolved = await resolveHeldOn(run, parts.names, eventId, resolution)
      await run('COMMIT')
      parts.heldLogged.delete(eventId)
      return resolved
    } catch (error) {
      await run('ROLLBACK')
      throw error
    }
  })
}

/** Whether the server rolls back the whole transaction on a lock wait timeout (off unless started so). */
async function rollsBackOnTimeout(connection: PoolConnection): Promise<boolean> {
  const [rows] = await connection.query({
    sql: 'SELECT @@GLOBAL.innodb_rollback_on_timeout AS r',
    timeout: STATEMENT_TIMEOUT_MS,
  })
  return Number((rows as { r: unknown }[])[0]?.r) === 1
}

/**
 * The options' pool, if it is a mysql2 promise Pool. A callback pool (from
 * `mysql2` rather than `mysql2/promise`) is refused with the fix: its methods
 * take callbacks, and the store awaits promises.
 */
function checkPool(options: MysqlStoreOptions | undefined): Pool {
  const pool = (options as { pool?: unknown } | undefined)?.pool as
    | { getConnection?: unknown; promise?: unknown }
    | undefined
  if (pool === undefined || pool === null || typeof pool.getConnection !== 'function') {
    throw new TypeError(
      "mysqlStore: `pool` is required: mysqlStore({ pool: mysql.createPool(url) }) with mysql from 'mysql2/promise'",
    )
  }
  if (typeof pool.promise === 'function') {
    throw new TypeError(
      "mysqlStore: `pool` is a callback pool of 'mysql2'; pass a promise pool: createPool from 'mysql2/promise', or pool.promise()",
    )
  }
  return pool as unknown as Pool
}

/**
 * An {@link EventStore} in MySQL or MariaDB whose handled mark commits in the
 * handler's own transaction: `ctx.tx` is the pool connection inside it. Write
 * the event's effects through `ctx.tx`, and they and the mark commit together or
 * not at all, so a crash between the two can no longer apply an event twice.
 * One row per conversion: the claim raises its watermark in that transaction,
 * and InnoDB's lock on the row is the conversion's lock until it commits or
 * rolls back. Two round trips of its own per delivery (CALL claim; CALL commit).
 */
export function mysqlStore(options: MysqlStoreOptions): MysqlEventStore {
  const pool = checkPool(options)
  const names = schemaNames(options, 'mysqlStore')
  const timings = resolveStoreTimings(options, 'mysqlStore')
  const logger = options.logger === false ? undefined : (options.logger ?? console)
  const fail = failer(pool, logger)
  const timeoutMs = checkAcquireTimeout('mysqlStore', options.acquireTimeoutMs ?? 3000)
  const acquire = () =>
    checkoutWithin(
      () => pool.getConnection(),
      (connection) => connection.release(),
      timeoutMs,
    ).catch((error: unknown) => {
      throw fail(error)
    })
  const server: ServerTraits = {
    rollbackOnTimeout: false,
    semiSync: undefined,
    semiSyncOff: false,
    replicaAway: false,
  }
  const ready = readyStep(names, acquire, fail, server, logger)
  const parts: Parts = {
    pool,
    names,
    timings,
    acquire,
    ready,
    fail,
    open: new Map(),
    server,
    logger,
    heldLogged: new Set(),
  }
  const prune = pruneStep(parts)
  const afterCommit = atMostEvery(PRUNE_EVERY_MS, () => pruneRound(prune))
  return {
    ready,
    begin: beginStep(parts),
    commit: commitStep(parts, afterCommit),
    release: releaseStep(parts),
    peek: peekStep(parts),
    recordAnswer: streakStep(parts),
    prune,
    heldEvents: () => withConnection(parts, (connection) => heldEventsOn(runOn(connection), names)),
    resolveHeld: (eventId, resolution) => resolveHeld(parts, eventId, resolution),
    // pool.end() closes every connection, after the queries already sent.
    close: closer('mysqlStore', logger, () => pool.end()),
  }
}

export { describeDatabase }

import { createHash, randomUUID } from 'node:crypto'
import {
  atMostEvery,
  type BeginInput,
  type BeginResult,
  type Claim,
  checkAcquireTimeout,
  checkoutWithin,
  type DatabaseEventStore,
  type EventStore,
  gatedStreak,
  type Logger,
  NO_STREAK,
  type PeekInput,
  type PeekResult,
  type PooledStoreOptions,
  PRUNE_BATCH,
  PRUNE_EVERY_MS,
  pruneRound,
  resolveStoreTimings,
  STREAK_CODES_KEPT,
} from '@affiliate-webhooks/core'
import type { Pool, PoolConnection } from 'mysql2/promise'
import { connectionFailure, describeDatabase, isConnectionLost } from './errors.js'
import { type MysqlSchemaOptions, type SchemaNames, schemaNames } from './schema.js'
import { ensureSchema } from './setup.js'

/** Options of {@link mysqlStore}. */
export interface MysqlStoreOptions extends PooledStoreOptions, MysqlSchemaOptions {
  /** A mysql2/promise `Pool`. The store takes one connection per delivery and never ends the pool. */
  pool: Pool
}

/** The MySQL store: `ctx.tx` is the pool connection inside the delivery's transaction. */
export interface MysqlEventStore extends DatabaseEventStore<PoolConnection> {}

/** Longest wait for one of the store's own statements; past it the connection is dropped. */
const STATEMENT_TIMEOUT_MS = 5000
/** How long a session this store ended (lease over) counts as going, for a retry in this process. */
const ENDING_MS = 5000
/** Event ids longer than the key column are keyed by their SHA-256. */
const KEY_BYTES = 255

/** A claim's transaction: its connection, its lease, and whether it is over. */
interface Open {
  connection: PoolConnection
  claimedAt: number
  leaseMs: number
  timer: ReturnType<typeof setTimeout> | undefined
  /** The lease ran out and the store ended the session. */
  expired: boolean
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
  /** Thread ids of sessions this store is ending because their lease ran out. */
  ending: Set<number>
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The events table's key: the id itself, or its hash when longer than the column. */
export function eventKey(eventId: string): string {
  if (Buffer.byteLength(eventId) <= KEY_BYTES) return eventId
  return `evt_sha256_${createHash('sha256').update(eventId).digest('hex')}`
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
    connection.destroy()
    throw parts.fail(error)
  }
  connection.release()
  return result
}

type Claiming = 'claimed' | 'duplicate' | 'stale' | 'in_progress'

/**
 * Calls the begin procedure until it decides. Only two cases poll: another
 * event of the conversion holds its lock (until lockWaitMs is over), or the
 * event's holder is a session this store is ending because its lease ran out.
 * Resolves the status, and whether the event lock is still held (in_progress
 * after waiting for the conversion).
 */
async function claimLoop(
  parts: Parts,
  connection: PoolConnection,
  values: unknown[],
): Promise<{ status: Claiming; holding: boolean }> {
  const deadline = Date.now() + parts.timings.lockWaitMs
  let holding = false
  let pause = 5
  for (;;) {
    const { status, holder } = (await call<{ status: string; holder: number | null }>(
      connection,
      `CALL ${parts.names.begin}(?, ?, ?, ?, ?, ?)`,
      values,
    )) ?? { status: 'claimed', holder: null }
    const ending = status === 'in_progress' && holder !== null && parts.ending.has(Number(holder))
    if (status !== 'locked' && !ending) return { status: status as Claiming, holding }
    holding ||= status === 'locked'
    const left = deadline - Date.now()
    if (left <= 0) return { status: 'in_progress', holding }
    await sleep(Math.min(pause, left))
    pause = Math.min(pause * 2, 50)
  }
}

/** Ends a claim whose lease ran out: the server rolls back and drops its locks as the connection closes. */
function expire(parts: Parts, token: string): void {
  const state = parts.open.get(token)
  if (state === undefined || state.expired) return
  state.expired = true
  const { threadId } = state.connection
  if (threadId !== null) {
    parts.ending.add(threadId)
    setTimeout(() => parts.ending.delete(threadId), ENDING_MS).unref()
  }
  state.connection.destroy()
}

function beginStep(parts: Parts) {
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
    let result: Awaited<ReturnType<typeof claimLoop>>
    try {
      result = await claimLoop(parts, connection, [
        eventKey(eventId),
        conversionId ?? null,
        order,
        leaseSeconds,
        parts.timings.dedupeTtl,
        parts.timings.orderingTtl,
      ])
      if (result.holding && result.status === 'in_progress') {
        await connection.query({ sql: 'DO RELEASE_ALL_LOCKS()', timeout: STATEMENT_TIMEOUT_MS })
      }
    } catch (error) {
      connection.destroy()
      throw parts.fail(error)
    }
    if (result.status !== 'claimed') {
      connection.release()
      return { status: result.status } as BeginResult<PoolConnection>
    }
    const token = randomUUID()
    const state: Open = {
      connection,
      claimedAt: Date.now(),
      leaseMs,
      timer: undefined,
      expired: false,
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
    return { status: 'claimed', claim: { eventId, conversionId, order, token, tx: connection } }
  }
}

/** Takes a claim's bookkeeping out of the map: it is being settled now. */
function settle(parts: Parts, claim: Claim<PoolConnection>): Open | undefined {
  const state = parts.open.get(claim.token)
  if (state === undefined) return undefined
  parts.open.delete(claim.token)
  clearTimeout(state.timer)
  state.connection.connection.off('error', state.onError)
  return state
}

function commitStep(parts: Parts, afterCommit: () => void) {
  return async (claim: Claim<PoolConnection>): Promise<boolean> => {
    const state = settle(parts, claim)
    // Committed or released already: a second commit changes nothing.
    if (state === undefined) return false
    const { connection } = state
    const leaseOver = () => Date.now() - state.claimedAt >= state.leaseMs
    if (state.expired) return false
    let refused: { committed: number } | undefined
    try {
      if (state.ended !== undefined) throw state.ended
      refused = await call<{ committed: number }>(
        connection,
        `CALL ${parts.names.commit}(?, ?, ?, ?, ?)`,
        [
          eventKey(claim.eventId),
          claim.conversionId ?? null,
          claim.order,
          parts.timings.dedupeTtl,
          parts.timings.orderingTtl,
        ],
      )
    } catch (error) {
      connection.destroy()
      // The server ended the session when the lease ran out: the transaction,
      // the handler's writes with it, rolled back, and the retry may run.
      if (isConnectionLost(error) && leaseOver()) return false
      throw parts.fail(error)
    }
    connection.release()
    if (refused !== undefined) return false
    afterCommit()
    return true
  }
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
      await connection.query({
        sql: `CALL ${parts.names.release}()`,
        timeout: STATEMENT_TIMEOUT_MS,
      })
      connection.release()
    } catch {
      // A connection whose rollback failed is given to no one else: the server
      // rolls back and drops its locks when it closes.
      connection.destroy()
    }
  }
}

function streakStep(parts: Parts) {
  return gatedStreak(async (code) => {
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
    const now = "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000)"
    const row = await withConnection(parts, async (connection) => {
      const [rows] = await connection.query({
        sql: `SELECT
          EXISTS (SELECT 1 FROM ${parts.names.events} WHERE event_id = ? AND expires_at > ${now}) AS done,
          (SELECT watermark FROM ${parts.names.conversions} WHERE conversion_id = ? AND expires_at > ${now}) AS watermark`,
        values: [eventKey(eventId), conversionId ?? null],
        timeout: STATEMENT_TIMEOUT_MS,
      })
      return (rows as { done: number; watermark: number | string | null }[])[0]
    })
    if (row === undefined) return 'unsettled'
    if (Number(row.done) === 1) return 'duplicate'
    if (row.watermark !== null && Number(row.watermark) >= order) return 'stale'
    return 'unsettled'
  }
}

function pruneStep(parts: Parts) {
  return async (limit = PRUNE_BATCH): Promise<number> => {
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw new TypeError(`mysqlStore: prune's \`limit\` must be a whole number >= 1; got ${limit}`)
    }
    const row = await withConnection(parts, (connection) =>
      callRow<{ deleted: number }>(connection, `CALL ${parts.names.prune}(?)`, [limit]),
    )
    return Number(row.deleted)
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

/** ready(): the schema once per process; tried again on the next call after a failure. */
function readyStep(
  names: SchemaNames,
  acquire: () => Promise<PoolConnection>,
  fail: Parts['fail'],
) {
  let setup: Promise<void> | undefined
  return () => {
    setup ??= (async () => {
      const connection = await acquire()
      try {
        await ensureSchema(connection, names)
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
 * Two round trips of its own per delivery (CALL begin; CALL commit).
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
  const ready = readyStep(names, acquire, fail)
  const parts: Parts = {
    pool,
    names,
    timings,
    acquire,
    ready,
    fail,
    open: new Map(),
    ending: new Set(),
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
  }
}

export { describeDatabase }

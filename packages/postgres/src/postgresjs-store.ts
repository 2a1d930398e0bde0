import { randomUUID } from 'node:crypto'
import type {
  BeginInput,
  BeginResult,
  Claim,
  PeekInput,
  PeekResult,
} from '@affiliate-webhooks/core'
import {
  atMostEvery,
  checkAcquireTimeout,
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
import type postgres from 'postgres'
import type { Sql, TransactionSql } from 'postgres'
import { CANCEL_GRACE_MS } from './bounded.js'
import {
  handlerEndedTransaction,
  isAborted,
  isBarrierRefused,
  isHandlerEnded,
  isLeaseEnd,
  isLockNotAvailable,
  isNotReplicated,
  notReplicated,
  unreachable,
} from './errors.js'
import { guardedTransaction } from './postgresjs-guard.js'
import { replicationOnce } from './replication.js'
import { type PostgresSchemaOptions, type SchemaNames, schemaNames } from './schema.js'
import {
  ensureSchema,
  type RunSql,
  readServerFacts,
  type ServerFacts,
  type SetupDriver,
} from './setup.js'
import {
  claimCallSql,
  durableDuplicateSql,
  heldLiteralSql,
  type PeekRow,
  peekSql,
  peekVerdict,
  pruneSql,
  SERVER_IDLE_MARGIN_MS,
  SESSION_READ_ONLY,
  SESSION_WRITABLE,
  staleCommitSql,
  streakOf,
  streakResetSql,
  streakSql,
  TRANSACTION_ID,
} from './statements.js'

/** A postgres.js instance, whatever its custom types. */
// biome-ignore lint/suspicious/noExplicitAny: postgres.js types are generic in the app's custom types.
export type PostgresJsSql = Sql<any>
/** ctx.tx: the delivery's transaction as a tagged template, with `unsafe`, `savepoint` and `options`. */
// biome-ignore lint/suspicious/noExplicitAny: as above.
export type PostgresJsTransaction = TransactionSql<any>

/** Options of `postgresStore` with a postgres.js instance. */
export interface PostgresJsStoreOptions extends PooledStoreOptions, PostgresSchemaOptions {
  /**
   * A postgres.js instance (`postgres(url)`), with `max` at least 2. Each delivery
   * runs on a connection the store reserves (`sql.reserve()`) for its transaction;
   * the store ends the instance only in `store.close()`.
   */
  sql: PostgresJsSql
}

/** The Postgres store on postgres.js: `ctx.tx` is the delivery's transaction `sql` (a tagged template). */
export interface PostgresJsEventStore extends DatabaseEventStore<PostgresJsTransaction> {}

/** A claim's transaction on postgres.js: its reserved connection, its id, its lease. */
interface OpenJs {
  conn: ReservedSql
  xact: string
  /** Settled by commit or release, or past its lease: ctx.tx refuses every query after it. */
  over: boolean
  savepoints: number
  timer: ReturnType<typeof setTimeout> | undefined
  /** The transaction ended under the handler: what the guard saw. */
  gone: string | undefined
}

// biome-ignore lint/suspicious/noExplicitAny: postgres.js types are generic in the app's custom types.
type ReservedSql = postgres.ReservedSql<any>

/**
 * Cancels `query` if the server is running it now. Not one sent behind
 * another on the same connection: postgres.js 3.4.9 pipelines, and cancelling
 * a query waiting in that pipeline hands its answer to the query after it, so
 * a reserved connection would never be handed back. That one waits, as before.
 */
function cancelRunning(query: unknown): void {
  const q = query as { cancel?: () => unknown; active?: boolean }
  if (typeof q.cancel !== 'function' || q.active !== true) return
  Promise.resolve(q.cancel()).catch(() => {})
}

/**
 * `promise`, or a rejection after `ms`: postgres.js has no per-query timeout.
 * A query (one with `cancel`) still running then is cancelled as well, so that
 * its connection comes back to the pool when its server answers the cancel (a
 * write waiting for a synchronous standby that is gone: statement_timeout does
 * not end that wait).
 */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      cancelRunning(promise)
      reject(new Error(`the database did not answer within ${ms} ms`))
    }, ms)
  })
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}

/** `PostgreSQL at host:port/database as user`, from the instance's parsed options: never the password. */
function describeSql(sql: PostgresJsSql): string {
  const o = sql.options
  const hosts = o.host.map((host, i) => `${host}:${o.port[i] ?? o.port[0]}`).join(',')
  return `PostgreSQL at ${hosts}/${o.database} as user ${o.user}`
}

function failure(sql: PostgresJsSql, cause: unknown): Error {
  return unreachable(
    `postgresStore: cannot use ${describeSql(sql)}`,
    "Check the postgres.js instance's connection settings (url, or host, port, database, username).",
    cause,
  )
}

function setupDriver(sql: PostgresJsSql): SetupDriver {
  const runOn =
    (on: PostgresJsSql | PostgresJsTransaction): RunSql =>
    async <Row>(text: string, params: unknown[] = []) =>
      (await within(
        on.unsafe(text, params as never[]) as unknown as Promise<Row[]>,
        STORE_STATEMENT_TIMEOUT_MS,
      )) as Row[]
  return {
    run: runOn(sql),
    transaction: async (work) => {
      await sql.begin((tx) => work(runOn(tx)))
    },
    failure: (cause) => failure(sql, cause),
  }
}

/**
 * A connection of the delivery's own, within `ms`. Reserved, not sql.begin:
 * postgres.js 3.4.9 hands a sql.begin connection back to its pool as soon as
 * the server reports it idle, so a transaction ended under the store (by the
 * handler) would let another delivery's statements and the store's COMMIT
 * meet on one connection. A reserved one is the store's until it releases it.
 */
function reserveWithin(sql: PostgresJsSql, ms: number): Promise<ReservedSql> {
  return new Promise((resolve, reject) => {
    let late = false
    const timer = setTimeout(() => {
      late = true
      reject(new Error(`no database connection within ${ms} ms`))
    }, ms)
    sql.reserve().then(
      (conn) => {
        clearTimeout(timer)
        if (late) conn.release()
        else resolve(conn)
      },
      (error: unknown) => {
        clearTimeout(timer)
        reject(error)
      },
    )
  })
}

/** What the store knows of a reserved connection: whether the server or the network closed it. */
interface Watched {
  closed: Error | undefined
}

/**
 * Reserved connections whose closing the store watches. postgres.js 3.4.9 does
 * not detach a reserved `sql` whose connection closed: a query sent on it then
 * throws out of the driver (a socket that is null) and ends the process, or
 * runs on the reconnected session in autocommit. So nothing is sent on a
 * closed one: ctx.tx refuses, the commit answers 503, the release sends nothing.
 */
const watched = new WeakMap<ReservedSql, Watched>()

/** The query option that learns the reserved connection from its first query, and watches it close. */
function watchClose(conn: ReservedSql) {
  const state: Watched = { closed: undefined }
  watched.set(conn, state)
  return {
    onexecute(connection: { onclose: ((error?: Error) => void) | null }) {
      connection.onclose = (error) => {
        state.closed = error ?? new Error('the connection to the database closed')
      }
    },
  }
}

/** Why nothing may be sent on `conn` any more: its connection closed. */
const closedOf = (conn: ReservedSql) => watched.get(conn)?.closed

/**
 * Ends the connection's transaction with `text` (ROLLBACK, or COMMIT of a stale
 * mark) and hands the connection back once the server has answered it: never
 * before, so no statement of this claim can run on another delivery's turn.
 * Waits at most the store's statement bound; a connection whose server does
 * not answer stays out of the pool until it answers or the connection closes
 * (postgres.js then opens a new one), never handed back half-way.
 */
function finish(conn: ReservedSql, text: string): Promise<void> {
  // Closed: the server rolled back as it closed, and postgres.js has the
  // connection again; releasing it would hand a dead one to the pool.
  if (closedOf(conn) !== undefined) return Promise.resolve()
  // On a failure it is not released: a closed connection is postgres.js's
  // again already, and a live one whose transaction may be open is kept out.
  const ended = conn.unsafe(`${text}; ${SESSION_WRITABLE}`).then(() => conn.release())
  return within(ended, STORE_STATEMENT_TIMEOUT_MS)
}

/** `promise`'s outcome, or 'late' after `ms`. */
async function settledWithin<T>(
  promise: Promise<T>,
  ms: number,
): Promise<{ ok: true } | { ok: false; error: unknown } | 'late'> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(resolve, ms, 'late')
  })
  const settled = promise.then(
    () => ({ ok: true as const }),
    (error: unknown) => ({ ok: false as const, error }),
  )
  return Promise.race([settled, late]).finally(() => clearTimeout(timer))
}

/**
 * Runs `text` (ending in COMMIT) and hands the connection back once it is
 * answered. A COMMIT still waiting at the store's bound (a synchronous standby
 * gone: the server does not end that wait on statement_timeout) is cancelled
 * (`query.cancel()`): the server ends the wait, the transaction stands on the
 * primary only, and the connection comes back to the pool; it throws
 * {@link notReplicated} (the connection handed back, or kept out until its
 * server answers). Throws the statement's own error otherwise, the connection
 * still the caller's.
 */
async function commitWithin(conn: ReservedSql, text: string): Promise<void> {
  // The session is writable again only once the store committed (statements.ts).
  const query = conn.unsafe(`${text}; ${SESSION_WRITABLE}`)
  let outcome = await settledWithin(query, STORE_STATEMENT_TIMEOUT_MS)
  if (outcome === 'late') {
    cancelRunning(query)
    outcome = await settledWithin(query, CANCEL_GRACE_MS)
    const error = notReplicated('postgresStore', STORE_STATEMENT_TIMEOUT_MS)
    if (outcome !== 'late' && outcome.ok) conn.release()
    // Not answered even the cancel, or the cancel ended it before COMMIT: rolled
    // back, and handed back once the server answers.
    else finish(conn, 'ROLLBACK').catch(() => {})
    throw error
  }
  if (!outcome.ok) throw outcome.error
  conn.release()
}

/** A stale mark's or a duplicate's commit: a failure rolls back (the connection handed back once answered). */
async function settleOn(conn: ReservedSql, text: string): Promise<void> {
  if (closedOf(conn) !== undefined) throw new Error('the connection to the database closed')
  try {
    await commitWithin(conn, text)
  } catch (error) {
    if (!isNotReplicated(error)) finish(conn, 'ROLLBACK').catch(() => {})
    throw error
  }
}

type Timings = ReturnType<typeof resolveStoreTimings>

/** BEGIN and the claim, pipelined on the reserved connection: its verdict. */
async function claimOn(
  conn: ReservedSql,
  names: SchemaNames,
  timings: Timings,
  input: BeginInput,
): Promise<string> {
  const leaseMs = input.leaseMs ?? timings.leaseMs
  // The claim may wait lockWaitMs for the conversion's row on purpose.
  const claimTimeoutMs = Math.max(STORE_STATEMENT_TIMEOUT_MS, timings.lockWaitMs + 1000)
  const params = [
    `${leaseMs}`,
    input.eventId,
    input.conversionId ?? null,
    input.order,
    `${timings.lockWaitMs}ms`,
    timings.dedupeTtl,
    timings.orderingTtl,
    `${leaseMs + SERVER_IDLE_MARGIN_MS}`,
  ]
  // Sent together (postgres.js pipelines a connection's queries); the claim is
  // prepared once per connection: the server parses and plans it once.
  const [, , rows] = await within(
    Promise.all([
      // A query of its own: in BEGIN's query it would join the transaction, and
      // a ROLLBACK of the handler's would undo it (statements.ts).
      conn.unsafe(SESSION_READ_ONLY),
      conn.unsafe('BEGIN ISOLATION LEVEL READ COMMITTED READ WRITE', [], watchClose(conn) as never),
      conn.unsafe(claimCallSql(names), params as never[], { prepare: true }),
    ]),
    claimTimeoutMs,
  )
  return String((rows[0] as unknown as { verdict: string }).verdict)
}

function beginStep(
  sql: PostgresJsSql,
  names: SchemaNames,
  timings: Timings,
  acquireTimeoutMs: number,
  ready: () => Promise<void>,
  open: Map<string, OpenJs>,
  facts: ServerFacts,
) {
  return async (input: BeginInput): Promise<BeginResult<PostgresJsTransaction>> => {
    await ready()
    const conn = await reserveWithin(sql, acquireTimeoutMs)
    let verdict: string
    try {
      verdict = await claimOn(conn, names, timings, input)
    } catch (error) {
      await finish(conn, 'ROLLBACK').catch(() => {})
      // Another live transaction holds the row past lockWaitMs: not ours to decide yet.
      if (isLockNotAvailable(error)) return { status: 'in_progress' }
      throw error
    }
    if (!TRANSACTION_ID.test(verdict)) {
      // A stale event was marked done inside the transaction: commit it. A
      // duplicate changed nothing, but its answer rests on a mark that may not
      // have reached the synchronous standbys yet (a commit cancelled at its
      // bound stands on the primary): its commit waits for them too.
      try {
        await settleOn(
          conn,
          verdict === 'stale' ? staleCommitSql(facts.sync) : durableDuplicateSql(facts.sync),
        )
      } catch (error) {
        // Rolled back by settleOn.
        if (verdict === 'stale' || !isBarrierRefused(error)) throw error
      }
      return { status: verdict } as BeginResult<PostgresJsTransaction>
    }
    const leaseMs = input.leaseMs ?? timings.leaseMs
    const token = randomUUID()
    const state: OpenJs = {
      conn,
      xact: verdict,
      over: false,
      savepoints: 0,
      timer: undefined,
      gone: undefined,
    }
    state.timer = setTimeout(() => expire(open, token, state), leaseMs)
    state.timer.unref()
    open.set(token, state)
    const guard = {
      over: () => state.over,
      closed: () => closedOf(conn),
      get savepoints() {
        return state.savepoints
      },
      set savepoints(n: number) {
        state.savepoints = n
      },
      gone: () => state.gone,
      onGone: (why: string) => {
        state.gone ??= why
      },
    }
    const tx = guardedTransaction(conn, guard, sql.options)
    const { eventId, conversionId, order } = input
    return { status: 'claimed', claim: { eventId, conversionId, order, token, tx } }
  }
}

/**
 * The lease ran out while the handler still runs: its entry leaves the map
 * (a handler that never settles leaves nothing behind), ctx.tx takes no more
 * queries, and the ROLLBACK goes out behind the handler's statement in flight
 * (its statement_timeout is the lease too). A commit or release after this
 * finds nothing to do: false, nothing committed.
 */
function expire(open: Map<string, OpenJs>, token: string, state: OpenJs): void {
  if (open.get(token) !== state) return
  open.delete(token)
  state.over = true
  finish(state.conn, 'ROLLBACK').catch(() => {})
}

function commitStep(
  open: Map<string, OpenJs>,
  names: SchemaNames,
  facts: ServerFacts,
  afterCommit: () => void,
) {
  return async (claim: Claim<PostgresJsTransaction>): Promise<boolean> => {
    const state = takeOpenClaim(open, claim)
    // Settled already, or past its lease (rolled back then): nothing commits.
    if (state === undefined) return false
    state.over = true
    const closed = closedOf(state.conn)
    if (closed !== undefined) {
      // The server rolled the transaction back as the session ended: the store's outage, not the handler's.
      throw Object.assign(
        new Error(
          `postgresStore: the connection closed while the handler ran (${closed.message}): nothing was committed`,
        ),
        { cause: closed },
      )
    }
    try {
      // The held check and COMMIT in one simple query: if the check fails, the
      // server skips the COMMIT. It stops a COMMIT of a transaction the handler
      // ended (and maybe began anew) by a statement the guard could not see.
      await commitWithin(state.conn, `${heldLiteralSql(names, state.xact, facts.sync)}; COMMIT`)
    } catch (error) {
      // Not confirmed in time: the connection is handled already.
      if (isNotReplicated(error)) throw error
      // Nothing committed (or, for a database that stopped answering, not
      // known): the ROLLBACK goes out behind the COMMIT, and the connection
      // goes back once it is answered. Awaited when the server answered (it
      // is quick, and the conversion's row is free before the answer), not
      // when it did not: the answer is bounded by one statement's wait.
      const rolledBack = finish(state.conn, 'ROLLBACK').catch(() => {})
      if (isAborted(error) || isHandlerEnded(error) || isLeaseEnd(error)) await rolledBack
      if (isAborted(error))
        throw handlerLeftAborted(error, 'wrap a statement that may fail in ctx.tx.savepoint()')
      if (isHandlerEnded(error)) throw handlerEndedTransaction('postgresStore', error, state.gone)
      if (isLeaseEnd(error)) return false
      throw error
    }
    afterCommit()
    return true
  }
}

function releaseStep(open: Map<string, OpenJs>) {
  return async (claim: Claim<PostgresJsTransaction>): Promise<void> => {
    const state = takeOpenClaim(open, claim)
    if (state === undefined) return
    state.over = true
    await finish(state.conn, 'ROLLBACK').catch(() => {})
  }
}

function otherSteps(
  sql: PostgresJsSql,
  names: SchemaNames,
  timings: Timings,
  ready: () => Promise<void>,
) {
  const run = setupDriver(sql).run
  const prune = async (limit = PRUNE_BATCH): Promise<number> => {
    await ready()
    let deleted = 0
    for (const table of [names.events, names.conversions]) {
      const result = (await within(
        sql.unsafe(pruneSql(table, limit)),
        STORE_STATEMENT_TIMEOUT_MS,
      )) as unknown as { count: number }
      deleted += result.count
    }
    return deleted
  }
  return {
    prune,
    async peek({ eventId, conversionId, order }: PeekInput): Promise<PeekResult> {
      await ready()
      const rows = await run<PeekRow>(peekSql(names), [eventId, conversionId ?? null])
      return peekVerdict(rows[0] as PeekRow, eventId, order)
    },
    recordAnswer: gatedStreak(async (code) => {
      await ready()
      if (code === null) {
        await run(streakResetSql(names))
        return NO_STREAK
      }
      const rows = await run<{ count: number; codes: string }>(streakSql(names), [
        code,
        STREAK_CODES_KEPT,
        timings.dedupeTtl,
      ])
      return streakOf(rows[0] as { count: number; codes: string })
    }),
  }
}

/** The options' sql, if it is a postgres.js instance with room for a second connection. */
function checkSql(options: PostgresJsStoreOptions): PostgresJsSql {
  const given: unknown = options.sql
  const sql = given as { begin?: unknown; options?: { max: number } }
  if (typeof given !== 'function' || typeof sql.begin !== 'function' || sql.options === undefined) {
    throw new TypeError(
      'postgresStore: `sql` must be a postgres.js instance: postgresStore({ sql: postgres(process.env.DATABASE_URL) })',
    )
  }
  if (sql.options.max < 2) {
    throw new TypeError(
      "postgresStore: the postgres.js instance has max: 1. Its one connection is held by a delivery's transaction while the handler runs, so any query on the outer `sql` meanwhile (the handler's, or another delivery's) would wait for it until the lease ends. Give it max: 2 or more (postgres.js's default is 10).",
    )
  }
  return sql as unknown as PostgresJsSql
}

/** `postgresStore` on postgres.js: see its documentation. */
export function postgresJsStore(options: PostgresJsStoreOptions): PostgresJsEventStore {
  const sql = checkSql(options)
  const names = schemaNames(options, 'postgresStore')
  const timings = resolveStoreTimings(options, 'postgresStore')
  const acquireTimeoutMs = checkAcquireTimeout('postgresStore', options.acquireTimeoutMs ?? 3000)
  const driver = setupDriver(sql)
  const logger = options.logger === false ? undefined : (options.logger ?? console)
  const checkReplication = replicationOnce(driver.run, logger)
  let setup: Promise<void> | undefined
  const facts: ServerFacts = { sync: 'NULL' }
  const ready = () => {
    setup ??= ensureSchema(driver, names)
      .then(() => readServerFacts(driver.run, names))
      .then((read) => {
        facts.sync = read.sync
      })
      .then(checkReplication)
      .catch((error: unknown) => {
        // Tried again on the next call: the database may come up later.
        setup = undefined
        throw error
      })
    return setup
  }
  const open = new Map<string, OpenJs>()
  const rest = otherSteps(sql, names, timings, ready)
  const afterCommit = atMostEvery(PRUNE_EVERY_MS, () => pruneRound(rest.prune))
  return {
    ready,
    begin: beginStep(sql, names, timings, acquireTimeoutMs, ready, open, facts),
    commit: commitStep(open, names, facts, afterCommit),
    release: releaseStep(open),
    ...rest,
    // postgres.js waits for the queries in flight, then ends the connections at once
    // after its own timeout (whole seconds); end() again without one ends them now.
    close: closer(
      'postgresStore',
      logger,
      (timeoutMs) => sql.end({ timeout: Math.max(0, Math.floor(timeoutMs / 1000) - 1) }),
      () => sql.end({ timeout: 0 }),
    ),
  }
}

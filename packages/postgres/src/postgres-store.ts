import { randomUUID } from 'node:crypto'
import type {
  BeginInput,
  BeginResult,
  Claim,
  EventStore,
  Logger,
  PeekInput,
  PeekResult,
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
import type { Pool, PoolClient } from 'pg'
import { bounded, commitAndRelease, listened, pgSetupDriver, queryWithin } from './bounded.js'
import {
  connectionFailure,
  handlerEndedTransaction,
  isAborted,
  isBarrierRefused,
  isHandlerEnded,
  isLeaseEnd,
  isLockNotAvailable,
  leaseEnded,
} from './errors.js'
import { guardedClient } from './pg-guard.js'
import {
  type PostgresJsEventStore,
  type PostgresJsStoreOptions,
  postgresJsStore,
} from './postgresjs-store.js'
import { replicationOnce } from './replication.js'
import { type PostgresSchemaOptions, type SchemaNames, schemaNames } from './schema.js'
import { ensureSchema, readServerFacts, type ServerFacts } from './setup.js'
import {
  durableDuplicateSql,
  heldLiteralSql,
  int,
  type PeekRow,
  peekSql,
  peekVerdict,
  pruneSql,
  staleCommitSql,
  streakOf,
  streakResetSql,
  streakSql,
  TRANSACTION_ID,
} from './statements.js'

const STORE = 'postgresStore'

/** Options of `postgresStore`. */
export interface PostgresStoreOptions extends PooledStoreOptions, PostgresSchemaOptions {
  /** A node-postgres `Pool`. The store takes one client per delivery; it ends the pool only in `store.close()`. */
  pool: Pool
}

/** The Postgres store: `ctx.tx` is the pool client inside the delivery's transaction. */
export interface PostgresEventStore extends DatabaseEventStore<PoolClient> {}

/** A claim's transaction: its client, its id, its lease, and whether the session ended. */
interface Open {
  client: PoolClient
  /** Settled by commit or release: ctx.tx refuses every query after it. */
  closed: boolean
  /** The transaction's id (txid_current), checked before the store's COMMIT. */
  xact: string
  /** Why the session ended before commit or release: the server, or the lease. */
  ended: Error | undefined
  /** The transaction ended under the handler (its own COMMIT or ROLLBACK): what the guard saw. */
  gone: string | undefined
  onError: (error: Error) => void
  timer: ReturnType<typeof setTimeout> | undefined
}

/**
 * Ends a claim whose lease ran out while its handler still runs: the client
 * leaves the pool and closes, so the server rolls the transaction back and drops
 * its locks. (The server's own bounds, the statement and idle timeouts set with
 * BEGIN, end a session whose process is too stuck to run this timer.)
 */
function expire(open: OpenTransactions, token: string, state: Open, leaseMs: number): void {
  // The entry leaves the map: a handler that never settles leaves nothing behind,
  // and a commit or release after this finds nothing to do (false, nothing committed).
  if (open.get(token) === state) open.delete(token)
  if (state.ended !== undefined) return
  state.ended = leaseEnded(leaseMs)
  state.client.release(state.ended)
}

/**
 * The claim's transaction, kept by token: the Claim the receiver holds carries
 * the client as `tx`, and the store finds its own bookkeeping here.
 */
type OpenTransactions = Map<string, Open>

/**
 * Ends a transaction the store began and hands the client back: a COMMIT (a
 * stale mark's, a duplicate's) waits for the synchronous standbys like any
 * other; a client whose ROLLBACK failed is dropped.
 */
async function finish(client: PoolClient, end: string): Promise<void> {
  if (end !== 'ROLLBACK') return commitAndRelease(client, STORE, end)
  try {
    await client.query(bounded(end))
    client.release()
  } catch (error) {
    client.release(error as Error)
    throw error
  }
}

/** A claimed transaction kept by a new token, its lease timed, and ctx.tx: its client behind the guard. */
function claimOf(open: OpenTransactions, state: Open, leaseMs: number) {
  const token = randomUUID()
  state.timer = setTimeout(expire, leaseMs, open, token, state, leaseMs)
  state.timer.unref()
  open.set(token, state)
  const tx = guardedClient(state.client, {
    over: () => state.closed || state.ended !== undefined,
    gone: () => state.gone,
    onGone: (why) => {
      state.gone ??= why
    },
  })
  return { token, tx }
}

function beginStep(
  names: SchemaNames,
  timings: ReturnType<typeof resolveStoreTimings>,
  acquire: Acquire,
  ready: () => Promise<void>,
  open: OpenTransactions,
  facts: ServerFacts,
) {
  // The claim may wait lockWaitMs for the conversion's row on purpose.
  const claimTimeoutMs = Math.max(STORE_STATEMENT_TIMEOUT_MS, timings.lockWaitMs + 1000)
  const lockWait = `'${int(timings.lockWaitMs)}ms'`
  return async ({
    eventId,
    conversionId,
    order,
    leaseMs = timings.leaseMs,
  }: BeginInput): Promise<BeginResult<PoolClient>> => {
    await ready()
    const client = await acquire()
    const state: Open = {
      client,
      closed: false,
      xact: '',
      ended: undefined,
      gone: undefined,
      onError: () => {},
      timer: undefined,
    }
    // A checked-out client with no 'error' listener would crash the process when
    // the server ends its session (a lease that ran out, a restart). Such a client
    // is useless: it leaves the pool at once, and commit or release find it ended.
    state.onError = (error) => {
      if (state.ended !== undefined) return
      state.ended = error
      client.release(error)
    }
    client.on('error', state.onError)
    let verdict: string
    try {
      // One round trip: BEGIN, the lease's bounds and the claim in one
      // simple-protocol query. The bounds end a handler that hangs (idle in
      // the transaction) or runs one statement too long; a transaction not
      // claimed ends at once, so setting them before the verdict costs
      // nothing. (No read-only session around it, as postgres.js has: in one
      // query the SET would join the transaction BEGIN opens, and a ROLLBACK
      // would undo it. pg's guard reads the transaction's status instead.)
      const results = (await client.query(
        bounded(
          `BEGIN ISOLATION LEVEL READ COMMITTED; SET LOCAL statement_timeout = ${int(leaseMs)}; SET LOCAL idle_in_transaction_session_timeout = ${int(leaseMs)}; SELECT ${names.claim}(${client.escapeLiteral(eventId)}, ${int(conversionId)}, ${int(order)}, ${lockWait}, ${int(timings.dedupeTtl)}, ${int(timings.orderingTtl)}) AS verdict`,
          [],
          claimTimeoutMs,
        ),
      )) as unknown as { rows: [{ verdict: string }] }[]
      verdict = (results[3] as { rows: [{ verdict: string }] }).rows[0].verdict
    } catch (error) {
      client.off('error', state.onError)
      // Another live transaction holds the row past lockWaitMs: not ours to decide yet.
      if (isLockNotAvailable(error)) {
        await finish(client, 'ROLLBACK')
        return { status: 'in_progress' }
      }
      client.release(error as Error)
      throw error
    }
    if (TRANSACTION_ID.test(verdict)) {
      state.xact = verdict
      const claim = claimOf(open, state, leaseMs)
      return { status: 'claimed', claim: { eventId, conversionId, order, ...claim } }
    }
    client.off('error', state.onError)
    // A stale event was marked done inside the transaction: commit it. A
    // duplicate changed nothing, but its answer rests on a mark that may not
    // have reached the synchronous standbys yet (a commit cancelled at its
    // bound stands on the primary): its commit waits for them too.
    try {
      await finish(
        client,
        verdict === 'stale' ? staleCommitSql(facts.sync) : durableDuplicateSql(facts.sync),
      )
    } catch (error) {
      // The client was dropped, so the server rolled back: nothing to undo.
      if (verdict === 'stale' || !isBarrierRefused(error)) throw error
    }
    return { status: verdict } as BeginResult<PoolClient>
  }
}

function commitStep(
  open: OpenTransactions,
  names: SchemaNames,
  facts: ServerFacts,
  afterCommit: () => void,
) {
  return async (claim: Claim<PoolClient>): Promise<boolean> => {
    const state = takeOpenClaim(open, claim)
    // Committed or released already: a second commit changes nothing.
    if (state === undefined) return false
    state.closed = true
    const { client } = state
    if (state.ended !== undefined) return transactionLost(state.ended)
    client.off('error', state.onError)
    try {
      // The watermark (or the event's row) was written by the claim, in this
      // transaction: committing it is the handled mark. The check before it
      // stops a COMMIT of a transaction the handler ended and began anew. A
      // failed client is dropped, not rolled back by hand: the server rolls
      // back as it closes, and a database that stopped answering would not
      // answer a ROLLBACK either.
      // held() signs this commit for the guard trigger and pins its synchronous_commit.
      await commitAndRelease(
        client,
        STORE,
        `${heldLiteralSql(names, state.xact, facts.sync)}; COMMIT`,
      )
    } catch (error) {
      if (isAborted(error))
        throw handlerLeftAborted(error, 'wrap a statement that may fail in a SAVEPOINT')
      // Only the handler's statements ran on this client since the claim: what
      // ended the transaction under the held check is the handler's doing.
      if (isHandlerEnded(error)) throw handlerEndedTransaction('postgresStore', error, state.gone)
      return transactionLost(error)
    }
    afterCommit()
    return true
  }
}

/**
 * Not committed, and never will be: false when the lease ended the transaction
 * or the handler ended it itself, the error itself otherwise (the database went
 * away: answered 503, retried).
 */
function transactionLost(error: unknown): boolean {
  if (isLeaseEnd(error)) return false
  throw error
}

function releaseStep(open: OpenTransactions) {
  return async (claim: Claim<PoolClient>): Promise<void> => {
    const state = takeOpenClaim(open, claim)
    if (state === undefined) return
    state.closed = true
    const { client } = state
    if (state.ended !== undefined) return
    client.off('error', state.onError)
    try {
      await client.query(bounded('ROLLBACK'))
      client.release()
    } catch (error) {
      // A client whose rollback failed is not given to anyone else: the server
      // rolls back when the connection closes.
      client.release(error as Error)
    }
  }
}

/** Takes a pool client within the store's deadline. */
type Acquire = () => Promise<PoolClient>

function streakStep(
  acquire: Acquire,
  names: SchemaNames,
  dedupeTtl: number,
  ready: () => Promise<void>,
) {
  return gatedStreak(async (code) => {
    await ready()
    if (code === null) {
      await queryWithin(acquire, bounded(streakResetSql(names)))
      return NO_STREAK
    }
    const { rows } = await queryWithin<{ count: number; codes: string }>(
      acquire,
      bounded(streakSql(names), [code, STREAK_CODES_KEPT, dedupeTtl]),
    )
    return streakOf(rows[0] as { count: number; codes: string })
  })
}

function pruneStep(acquire: Acquire, names: SchemaNames, ready: () => Promise<void>) {
  return async (limit = PRUNE_BATCH): Promise<number> => {
    await ready()
    let deleted = 0
    for (const table of [names.events, names.conversions]) {
      const result = await queryWithin(acquire, bounded(pruneSql(table, limit)))
      deleted += result.rowCount ?? 0
    }
    return deleted
  }
}

/**
 * Listens for the pool's idle clients failing (a database restart), when the app
 * does not: an 'error' event nobody listens to would end the process. Says so
 * once per outage, unless the logger is `false`.
 */
function watchPool(pool: Pool, logger: Logger | undefined): void {
  if (pool.listenerCount('error') > 0) return
  let reported = false
  pool.on('error', (error: Error) => {
    if (logger === undefined) return
    if (!reported) logger.error(connectionFailure('postgresStore', pool, error).message)
    reported = true
    setTimeout(() => {
      reported = false
    }, PRUNE_EVERY_MS).unref()
  })
}

/** The options' pool, if it is a node-postgres Pool: a Client would serve one delivery at a time, then hang. */
function checkPool(options: PostgresStoreOptions | undefined): Pool {
  const pool = (options as { pool?: unknown } | undefined)?.pool as
    | (Partial<Pool> & { connect?: unknown })
    | undefined
  if (pool === undefined || pool === null || typeof pool.connect !== 'function') {
    throw new TypeError(
      'postgresStore: `pool` (node-postgres) or `sql` (postgres.js) is required: postgresStore({ pool: new pg.Pool({ connectionString }) }) or postgresStore({ sql: postgres(url) })',
    )
  }
  if (typeof pool.totalCount !== 'number' || typeof pool.idleCount !== 'number') {
    throw new TypeError(
      'postgresStore: `pool` must be a node-postgres Pool (new pg.Pool(...)), not a Client: the store takes a client of its own for each delivery',
    )
  }
  return pool as Pool
}

/**
 * An {@link EventStore} in PostgreSQL whose handled mark commits in the
 * handler's own transaction: `ctx.tx` is the pool client inside it. Write the
 * event's effects through `ctx.tx`, and they and the mark commit together or
 * not at all, so a crash between the two can no longer apply an event twice.
 * One row per conversion: the claim raises its watermark in that transaction,
 * and the row's lock is the conversion's lock until it commits or rolls back.
 * Two round trips of its own per delivery (BEGIN + claim; COMMIT).
 */
export function postgresStore(options: PostgresStoreOptions): PostgresEventStore
/**
 * The same store on postgres.js: each delivery runs on a connection the store
 * reserves (`sql.reserve()`) and `ctx.tx` is its transaction as a tagged
 * template (`` await ctx.tx`INSERT INTO ledger ...` ``), with `unsafe`, `file`
 * and `savepoint`. The same tables, functions and answers as with `pg`; the
 * store's BEGIN goes out pipelined with the claim, and the held check with COMMIT.
 */
export function postgresStore(options: PostgresJsStoreOptions): PostgresJsEventStore
export function postgresStore(
  options: PostgresStoreOptions | PostgresJsStoreOptions,
): PostgresEventStore | PostgresJsEventStore {
  if ((options as { sql?: unknown } | undefined)?.sql !== undefined) {
    return postgresJsStore(options as PostgresJsStoreOptions)
  }
  return pgStore(options as PostgresStoreOptions)
}

function pgStore(options: PostgresStoreOptions): PostgresEventStore {
  const pool = checkPool(options)
  const names = schemaNames(options, 'postgresStore')
  const timings = resolveStoreTimings(options, 'postgresStore')
  const timeoutMs = checkAcquireTimeout('postgresStore', options.acquireTimeoutMs ?? 3000)
  const acquire = () =>
    checkoutWithin(
      () => pool.connect().then(listened),
      (client) => client.release(),
      timeoutMs,
    )
  const logger = options.logger === false ? undefined : (options.logger ?? console)
  watchPool(pool, logger)
  const driver = pgSetupDriver(pool, acquire)
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
  const open: OpenTransactions = new Map()
  const prune = pruneStep(acquire, names, ready)
  const afterCommit = atMostEvery(PRUNE_EVERY_MS, () => pruneRound(prune))

  return {
    ready,
    begin: beginStep(names, timings, acquire, ready, open, facts),
    commit: commitStep(open, names, facts, afterCommit),
    release: releaseStep(open),
    async peek({ eventId, conversionId, order }: PeekInput): Promise<PeekResult> {
      await ready()
      const { rows } = await queryWithin<PeekRow>(
        acquire,
        bounded(peekSql(names), [eventId, conversionId ?? null]),
      )
      return peekVerdict(rows[0] as PeekRow, eventId, order)
    },
    recordAnswer: streakStep(acquire, names, timings.dedupeTtl, ready),
    prune,
    // pool.end() waits for the connections checked out (claims in flight) to come back.
    close: closer('postgresStore', logger, () => pool.end()),
  }
}

/**
 * Small parts every shared store (Redis, Postgres, MySQL) needs the same way:
 * the failure streak's reset gate, a pool checkout with a deadline, and work
 * done at most once a period. One copy here, so the stores cannot drift.
 */
import { WebhookError } from '../errors.js'
import type { Logger } from '../telemetry/delivery-log.js'
import {
  type BeginInput,
  type BeginResult,
  type Claim,
  type CloseOptions,
  type EventStore,
  type FailureStreak,
  NO_STREAK,
  type PeekInput,
  type PeekResult,
  type StoreTimings,
} from './event-store.js'

/** Options every store on a database pool takes, beside its pool and names. */
export interface PooledStoreOptions extends StoreTimings {
  /**
   * Longest wait for a connection from the pool, ms. Past it the delivery is
   * answered 503 `store_unavailable`, well inside the service's 10 s. Default 3000.
   */
  acquireTimeoutMs?: number | undefined
  /**
   * Where the store reports a lost database (once per outage) and, on PostgreSQL,
   * says once at start that it runs on a primary whose standbys are asynchronous.
   * Default `console`; `false` silences it.
   */
  logger?: Logger | false | undefined
}

/** A store in the publisher's database: `ctx.tx` is the connection inside the delivery's transaction. */
export interface DatabaseEventStore<Tx> extends EventStore<Tx> {
  /**
   * Creates the tables if they are missing and checks their version. Called on
   * first use; call it at start-up to fail there, with the database named,
   * rather than on the first delivery. The PostgreSQL stores also look, once,
   * for asynchronous standbys, and warn through `logger` when a failover could
   * lose what the receiver acknowledged.
   */
  ready(): Promise<void>
  begin(input: BeginInput): Promise<BeginResult<Tx>>
  commit(claim: Claim<Tx>): Promise<boolean>
  release(claim: Claim<Tx>): Promise<void>
  peek(input: PeekInput): Promise<PeekResult>
  recordAnswer(code: string | null): Promise<FailureStreak>
  /** Deletes expired marks and watermarks, at most `limit` of each. The store does this by itself, once a minute. */
  prune(limit?: number): Promise<number>
  /**
   * Ends the pool, instance, client or database the store was given, for a
   * graceful shutdown (see {@link EventStore.close}): bounded, never rejects.
   */
  close(options?: CloseOptions): Promise<void>
}

/**
 * A healthy process resets the shared failure streak at most this often: a 2xx
 * after a failure resets at once, but a stream of 2xx costs one write a second,
 * not one per delivery.
 */
export const STREAK_RESET_EVERY_MS = 1000

/** How often a store prunes expired rows, at most, as part of normal work. */
export const PRUNE_EVERY_MS = 60_000

/** Rows of each table one prune deletes at most: short statements, no long locks. */
export const PRUNE_BATCH = 500

/**
 * One round of pruning, once a period, runs batches while they come back full,
 * at most this many: up to 50,000 rows of each table a minute per process, far
 * above what the service delivers to one endpoint.
 */
export const PRUNE_ROUND_BATCHES = 100

/** The longest one round of pruning goes on, ms, however many batches come back full. */
export const PRUNE_ROUND_BUDGET_MS = 5000

/**
 * Longest wait for one of a database store's own statements (beside any lock
 * wait the statement does on purpose). A database that stops answering without
 * closing the connection gets the delivery a 503 after this, inside the
 * service's 10 s, and the connection is dropped.
 */
export const STORE_STATEMENT_TIMEOUT_MS = 5000

/**
 * `recordAnswer` over a store's own `record(code)` (null: a 2xx resets the
 * streak), with the reset gate: while this process has seen no failure, a 2xx
 * writes at most once per {@link STREAK_RESET_EVERY_MS}.
 */
export function gatedStreak(
  record: (code: string | null) => Promise<FailureStreak>,
  now: () => number = Date.now,
): (code: string | null) => Promise<FailureStreak> {
  let seen = 0
  let resetAt = Number.NEGATIVE_INFINITY
  return async (code) => {
    if (code === null) {
      const at = now()
      if (seen === 0 && at - resetAt < STREAK_RESET_EVERY_MS) return NO_STREAK
      resetAt = at
    }
    const streak = await record(code)
    seen = streak.count
    return streak
  }
}

const SQL_IDENTIFIER = /^[a-z_][a-z0-9_]{0,39}$/

/**
 * Checks a SQL store's `tablePrefix` (default `aw_`) or `schema`: lower-case
 * letters, digits and _, at most 40, not starting with a digit, so every name
 * built from it needs no quoting on any of the SQL stores. Returns it.
 */
export function checkSqlIdentifier(
  caller: string,
  option: 'tablePrefix' | 'schema',
  value: string,
): string {
  if (!SQL_IDENTIFIER.test(value)) {
    throw new TypeError(
      `${caller}: \`${option}\` must be lower-case letters, digits and _ (at most 40), starting with a letter or _; got ${JSON.stringify(value)}`,
    )
  }
  return value
}

/** How long a store's close() waits for a clean end by default, ms. */
export const CLOSE_TIMEOUT_MS = 5000

/** How a store's connection ended: cleanly, at once after a failure or the deadline, or still ending. */
export type CloseOutcome = 'closed' | 'forced' | 'still_ending'

/**
 * A store's `close()`, once: `clean` ends the connection politely; when it
 * fails or outlasts `timeoutMs`, `force` (when the driver has one) ends it at
 * once. Never rejects; what went wrong is said to the logger in one line.
 * Calling the returned function again returns the first call's promise.
 */
export function closer(
  caller: string,
  logger: Logger | undefined,
  clean: (timeoutMs: number) => unknown,
  force?: () => unknown,
): (options?: { timeoutMs?: number | undefined }) => Promise<void> {
  let closing: Promise<void> | undefined
  return (options = {}) => {
    const timeoutMs = options.timeoutMs ?? CLOSE_TIMEOUT_MS
    if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 0 || timeoutMs > 2 ** 31 - 1) {
      // A mistake in the call, thrown where it is made, not a rejection.
      throw new TypeError(
        `${caller}: close(): \`timeoutMs\` must be a whole number of milliseconds >= 0; got ${timeoutMs}`,
      )
    }
    closing ??= closeOnce(timeoutMs, clean, force).then(({ outcome, reason }) => {
      if (outcome === 'closed' || logger === undefined) return
      const then =
        outcome === 'forced' ? 'it was ended at once' : 'it ends once what still holds it is done'
      logger.warn(`${caller}: close(): the connection did not end cleanly (${reason}); ${then}`)
    })
    return closing
  }
}

/** The clean end within the deadline, else the forced one; the outcome as data. */
export async function closeOnce(
  timeoutMs: number,
  clean: (timeoutMs: number) => unknown,
  force?: () => unknown,
): Promise<{ outcome: CloseOutcome; reason: string }> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const deadline = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(resolve, timeoutMs, 'timeout')
  })
  let reason: string
  try {
    const ended = await Promise.race([Promise.resolve().then(() => clean(timeoutMs)), deadline])
    if (ended !== 'timeout') return { outcome: 'closed', reason: '' }
    reason = `not within ${timeoutMs} ms`
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    // A driver's message may carry a connection string: never its secrets.
    reason = message.replace(/[a-z][a-z0-9+.-]*:\/\/\S*/gi, '<url>')
  } finally {
    clearTimeout(timer)
  }
  if (force === undefined) return { outcome: 'still_ending', reason }
  try {
    await force()
  } catch {
    // Ending at once is the last resort: what it throws changes nothing.
  }
  return { outcome: 'forced', reason }
}

/** Checks a store's `acquireTimeoutMs`: whole milliseconds, at least 1, a timer's range. */
export function checkAcquireTimeout(caller: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1 || value > 2 ** 31 - 1) {
    throw new TypeError(
      `${caller}: \`acquireTimeoutMs\` must be a whole number of milliseconds >= 1; got ${value}`,
    )
  }
  return value
}

/**
 * `checkout()` within `timeoutMs`, else rejects with "no database connection
 * within N ms"; a connection that arrives after that goes straight back with
 * `giveBack`, so a slow pool never leaks one.
 */
export function checkoutWithin<T>(
  checkout: () => Promise<T>,
  giveBack: (connection: T) => void,
  timeoutMs: number,
): Promise<T> {
  return new Promise((resolve, reject) => {
    let late = false
    const timer = setTimeout(() => {
      late = true
      reject(new Error(`no database connection within ${timeoutMs} ms`))
    }, timeoutMs)
    checkout().then(
      (connection) => {
        clearTimeout(timer)
        if (late) giveBack(connection)
        else resolve(connection)
      },
      (error: unknown) => {
        clearTimeout(timer)
        reject(error)
      },
    )
  })
}

/**
 * Takes a claim's bookkeeping out of its store's map of open transactions and
 * stops its lease timer: the claim is being settled (committed or released)
 * now. Undefined when it was settled already: a second commit or release
 * changes nothing.
 */
export function takeOpenClaim<Open extends { timer: ReturnType<typeof setTimeout> | undefined }>(
  open: Map<string, Open>,
  claim: Claim<unknown>,
): Open | undefined {
  const state = open.get(claim.token)
  if (state === undefined) return undefined
  open.delete(claim.token)
  clearTimeout(state.timer)
  return state
}

/**
 * The handler caught a statement of ctx.tx that failed and returned normally:
 * the transaction could only roll back, so nothing it wrote was kept. Answered
 * 500 like a handler that threw; `remedy` is the driver's way to recover.
 */
export function handlerLeftAborted(cause: unknown, remedy: string): WebhookError {
  return new WebhookError(
    'handler_failed',
    `A statement of the handler failed inside ctx.tx and the handler went on, so the transaction could only roll back (nothing it wrote was kept). Let the error propagate${remedy === '' ? '' : `, or ${remedy}`}.`,
    { cause },
  )
}

/**
 * A function that starts `work` when at least `everyMs` passed since the last
 * start (the first time, `everyMs` after creation); its failures are dropped:
 * it is housekeeping, tried again next period.
 */
export function atMostEvery(
  everyMs: number,
  work: () => Promise<unknown>,
  now: () => number = Date.now,
): () => void {
  let last = now()
  return () => {
    const at = now()
    if (at - last < everyMs) return
    last = at
    work().catch(() => {})
  }
}

/**
 * Runs `prune` in batches of {@link PRUNE_BATCH} while a batch comes back full,
 * within {@link PRUNE_ROUND_BATCHES} batches and {@link PRUNE_ROUND_BUDGET_MS}, so
 * the tables stop growing however many events arrive. Resolves the rows deleted.
 */
export async function pruneRound(
  prune: (limit: number) => Promise<number>,
  now: () => number = Date.now,
): Promise<number> {
  const until = now() + PRUNE_ROUND_BUDGET_MS
  let total = 0
  for (let batch = 0; batch < PRUNE_ROUND_BATCHES; batch++) {
    const deleted = await prune(PRUNE_BATCH)
    total += deleted
    if (deleted < PRUNE_BATCH || now() >= until) break
  }
  return total
}

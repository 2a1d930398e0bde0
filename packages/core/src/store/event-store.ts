/**
 * De-duplication and ordering state, shared by every attempt that may race for
 * the same event. Each operation is one atomic step (one Lua script in Redis).
 *
 * Every store answers an event already handled (or judged stale) `duplicate`,
 * and an event of a conversion at or below its watermark (the order of the
 * newest event handled for it) `stale`: 2xx, the handler not called. An event
 * of a conversion while another of its events is in flight waits at most
 * `lockWaitMs` for it, then `in_progress` (409, the service retries).
 *
 * The SQL stores (`@affiliate-webhooks/postgres`, `@affiliate-webhooks/mysql`)
 * keep one row per conversion: its committed watermark is the handled mark and
 * its row lock the conversion's lock. There, a committed duplicate or stale
 * event is answered at once, without a lock, even while a newer event of its
 * conversion holds the row; and a duplicate of an event whose first delivery
 * is still running waits on that row too, so it gets `in_progress` within
 * `lockWaitMs` rather than at once (the memory and Redis stores answer it at
 * once). Events without a conversion (webhook.test) keep a row of their own
 * in the same way.
 */
export interface EventStore<Tx = undefined> {
  /** Decides what to do with a verified event; see {@link BeginResult}. */
  begin(input: BeginInput): MaybePromise<BeginResult<Tx>>
  /**
   * The handler succeeded: mark the event done, raise the conversion's watermark
   * to its order and drop the lock. Resolves false, changing nothing, when the
   * claim's lease was lost to a newer attempt or the event is already done.
   *
   * For a claim that carries a transaction ({@link Claim.tx}), the mark and the
   * watermark are written in that transaction (the SQL stores raise the
   * watermark at the claim already), which then commits: the handler's writes
   * and the mark land together or not at all. False then means
   * the transaction was ended before its commit (the handler's writes are gone).
   * A store that finds the handler to blame (it caught a failed statement and
   * returned, leaving a transaction that can only roll back) rejects with a
   * `handler_failed` WebhookError: answered 500, as if the handler had thrown.
   */
  commit(claim: Claim<Tx>): MaybePromise<boolean>
  /**
   * The handler failed: drop the lease and the lock so the retry can run. A
   * claim's transaction is rolled back, the handler's writes with it.
   */
  release(claim: Claim<Tx>): MaybePromise<void>
  /**
   * Optional: renews the claim's lease (and its conversion's lock) to `leaseMs`
   * from now, while the claim still holds it, so a handler that runs long keeps
   * its event while one whose process died loses it soon. Resolves false,
   * changing nothing, when the lease is no longer the claim's (it ran out, it was
   * released or committed, or a newer attempt took it over). Queue workers renew
   * this way; with a store without it, a worker takes one lease as long as its
   * slowest handler instead.
   */
  extend?(claim: Claim<Tx>, leaseMs: number): MaybePromise<boolean>
  /**
   * Optional and read-only: what {@link EventStore.begin} would say about an event
   * that is already settled, without taking a lease or marking anything. A queue
   * hand-off asks it before adding a job, so an event handled long ago (its job
   * since removed from the queue) is answered at once instead of queued again.
   * Stores without it still work: the worker's `begin` catches the duplicate.
   */
  peek?(input: PeekInput): MaybePromise<PeekResult>
  /**
   * Optional: counts the receiver's answers that were not 2xx in a row, across
   * every process sharing the store, so the receiver can warn before the service
   * disables the endpoint (after 20 failed attempts in a row). `code` is the
   * answer's error code, or null for a 2xx answer, which resets the count.
   * Resolves to the streak after this answer. Stores without it still work: the
   * receiver then counts in its own process only.
   */
  recordAnswer?(code: string | null): MaybePromise<FailureStreak>
  /**
   * Optional (every store of this project has it): ends the connection the store
   * uses, the client, pool or database it was given or made, for a graceful
   * shutdown. Call it last, once the server stopped taking requests. It waits at
   * most `timeoutMs` (default 5 s) for a clean end, then ends the connection at
   * once where the driver can; it never rejects, even when the database is
   * already gone, so a shutdown handler can always await it. Calling it again
   * does nothing more.
   */
  close?(options?: CloseOptions): Promise<void>
}

/** Options of {@link EventStore.close}. */
export interface CloseOptions {
  /** Longest close() waits for the connection to end cleanly, ms. Default 5000. */
  timeoutMs?: number | undefined
}

/** How many answers in a row were not 2xx, and the codes of the last ones. */
export interface FailureStreak {
  /** 0 after a 2xx answer. */
  count: number
  /** Error codes of the latest failed answers, newest first, at most five (`STREAK_CODES_KEPT`). */
  recentCodes: readonly string[]
}

/** How many of the latest failed answers' codes a store keeps for {@link FailureStreak}. */
export const STREAK_CODES_KEPT = 5

/** The streak after a 2xx answer. */
export const NO_STREAK: FailureStreak = Object.freeze({ count: 0, recentCodes: Object.freeze([]) })

/** What {@link EventStore.peek} needs: the event's identity and order, no lease. */
export type PeekInput = Omit<BeginInput, 'leaseMs'>

/**
 * `duplicate`: handled (or judged stale) before. `stale`: a newer event of its
 * conversion was handled. `unsettled`: neither, as far as the store knows now
 * (it may be new, queued or running).
 */
export type PeekResult = 'duplicate' | 'stale' | 'unsettled'

/**
 * A store may answer synchronously (the memory store does unless it has to wait),
 * which spares the receiver a promise per step.
 */
export type MaybePromise<T> = T | Promise<T>

/**
 * True for a native promise or any thenable, from this realm or another (a
 * handler's promise from a vm context or a promise library must still be
 * awaited, or the answer would come before the handler finished). Callers chain
 * on `Promise.resolve(value)`, which is the value itself when it is native.
 */
export const isPromiseLike = <T>(value: MaybePromise<T>): value is Promise<T> =>
  // A boolean or undefined (a commit's answer, most handlers' return) is told at
  // the first test; a native promise has its `then` like any thenable.
  typeof value === 'object' &&
  value !== null &&
  typeof (value as { then?: unknown }).then === 'function'

/** What {@link EventStore.begin} needs to know about a verified event. */
export interface BeginInput {
  /** The signed body's `id`. */
  eventId: string
  /** Set for conversion events, which are ordered per conversion. */
  conversionId?: number | undefined
  /**
   * Where the event stands in its conversion's order; larger is newer. The
   * receiver derives it from the event's createdAt: microseconds since the epoch,
   * times two, plus one for conversion.updated, so a created and an updated event
   * stamped in the same instant still order. Stores only compare it.
   */
  order: number
  /**
   * @deprecated Renamed {@link BeginInput.order} (it never was a time). The same
   * value, still passed in 0.x so a store written against the old name keeps its
   * ordering; it goes in 1.0.
   */
  createdAt?: number | undefined
  /** How long the claim holds before another attempt may take over. Default: the store's `leaseMs`. */
  leaseMs?: number | undefined
}

/** Proof of a successful {@link EventStore.begin}; `token` fences a late commit. */
export interface Claim<Tx = undefined> {
  eventId: string
  conversionId?: number | undefined
  /** The {@link BeginInput.order} it was claimed with. */
  order: number
  token: string
  /**
   * The lease the store took, ms, when it keeps one (memory, Redis): what a
   * renewal keeps alive, and how often a failed one is tried again.
   */
  leaseMs?: number | undefined
  /**
   * Optional capability: a transaction open in the store's database, handed to
   * the handler as `ctx.tx`. The store commits the handled mark in it (commit)
   * or rolls it back (release). Stores that keep their state apart from the
   * handler's (memory, Redis) leave it out.
   */
  tx?: Tx | undefined
}

/** The store's decision about a verified event. */
export type BeginResult<Tx = undefined> =
  /** Yours to handle; commit or release it. */
  | { status: 'claimed'; claim: Claim<Tx> }
  /** Already handled: answer 2xx, do not call the handler. */
  | { status: 'duplicate' }
  /** A newer event of the same conversion was handled: answer 2xx, do not call the handler. */
  | { status: 'stale' }
  /** Another attempt holds it right now: answer 409 so the service retries later. */
  | { status: 'in_progress' }

/** Defaults shared by every store. */
export const STORE_DEFAULTS = {
  /** The whole 8-attempt schedule (about 45 h) plus margin. */
  dedupeTtl: 72 * 60 * 60 * 1000,
  /** Conversions change status over weeks. */
  orderingTtl: 90 * 24 * 60 * 60 * 1000,
  /** Longer than the service's 10 s timeout, shorter than its first retry at +1 min. */
  leaseMs: 30_000,
  /** How long an event waits for another event of the same conversion in flight. */
  lockWaitMs: 2_000,
} as const

/** Durations every store takes, in milliseconds. */
export interface StoreTimings {
  /** How long a handled event id is remembered. Default 72 h. */
  dedupeTtl?: number | undefined
  /** How long a conversion's watermark is kept. Default 90 days. */
  orderingTtl?: number | undefined
  /** How long one attempt holds its event when `begin` names no lease. Default 30 s. */
  leaseMs?: number | undefined
  /** How long an event waits for another in-flight event of its conversion. Default 2 s. */
  lockWaitMs?: number | undefined
}

/** Longest delay a timer can wait (setTimeout's limit), ms. */
export const MAX_TIMER = 2 ** 31 - 1

function duration(
  caller: string,
  name: string,
  value: number | undefined,
  fallback: number,
  max: number,
): number {
  if (value === undefined) return fallback
  // Redis refuses a fractional or zero expiry on every call, which would turn into a 503 for
  // every delivery; refusing it here, once, names the mistake instead.
  if (!Number.isSafeInteger(value) || value < 1 || value > max) {
    throw new TypeError(
      `${caller}: \`${name}\` must be a whole number of milliseconds from 1 to ${max}; got ${value}`,
    )
  }
  return value
}

/**
 * Checks a store's durations once, at start-up, and fills in the defaults. For
 * authors of other stores as well.
 */
export function resolveStoreTimings(
  options: StoreTimings,
  caller: string,
): Required<{ [K in keyof StoreTimings]: number }> {
  return {
    dedupeTtl: duration(
      caller,
      'dedupeTtl',
      options.dedupeTtl,
      STORE_DEFAULTS.dedupeTtl,
      Number.MAX_SAFE_INTEGER,
    ),
    orderingTtl: duration(
      caller,
      'orderingTtl',
      options.orderingTtl,
      STORE_DEFAULTS.orderingTtl,
      Number.MAX_SAFE_INTEGER,
    ),
    leaseMs: duration(caller, 'leaseMs', options.leaseMs, STORE_DEFAULTS.leaseMs, MAX_TIMER),
    lockWaitMs: duration(
      caller,
      'lockWaitMs',
      options.lockWaitMs,
      STORE_DEFAULTS.lockWaitMs,
      MAX_TIMER,
    ),
  }
}

/**
 * Small parts every shared store (Redis, Postgres, MySQL) needs the same way:
 * the failure streak's reset gate, a pool checkout with a deadline, and work
 * done at most once a period. One copy here, so the stores cannot drift.
 */
import { type FailureStreak, NO_STREAK } from './store.js'

/**
 * A healthy process resets the shared failure streak at most this often: a 2xx
 * after a failure resets at once, but a stream of 2xx costs one write a second,
 * not one per delivery.
 */
export const STREAK_RESET_EVERY_MS = 1000

/** How often a store prunes expired rows, at most, as part of normal work. */
export const PRUNE_EVERY_MS = 60_000

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

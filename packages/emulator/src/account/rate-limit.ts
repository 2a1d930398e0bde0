import { ApiError } from '../shared/api-error.js'

/** Requests per fixed one-minute window, per account. */
export const RATE_LIMIT = 120
/** Calls per calendar month (UTC), per account. */
export const MONTHLY_QUOTA = 250_000

const MINUTE = 60_000

/**
 * The `Date` of an answer, on the emulator's clock: the client reads
 * `X-RateLimit-Reset` minus `Date` as the time the window has left. At time
 * scale 1 it is the clock's own time; at N it is set back from the window's
 * end by the real time left, so that difference stays real time too.
 */
export function answerDate(now: number, timeScale: number): string {
  const reset = (Math.floor(now / MINUTE) + 1) * MINUTE
  return new Date(reset - (reset - now) / timeScale).toUTCString()
}

/** Options of {@link createRateLimiter}. */
export interface RateLimiterOptions {
  /** Service time, epoch ms. */
  now: () => number
  /** Service ms per real ms, so Retry-After says real seconds. */
  timeScale: number
  /** Default {@link RATE_LIMIT}. */
  limit?: number
  /** Default {@link MONTHLY_QUOTA}. */
  quota?: number
}

/**
 * The spec's limits: a fixed minute window (of service time) and a monthly quota.
 * `check` answers the headers of an authenticated request or throws the 429, and
 * counts the request unless it was refused.
 */
export function createRateLimiter(options: RateLimiterOptions) {
  const limit = options.limit ?? RATE_LIMIT
  const quota = options.quota ?? MONTHLY_QUOTA
  let windowStart = Number.NEGATIVE_INFINITY
  let inWindow = 0
  let month = ''
  let used = 0

  return {
    /**
     * For a request that passed authentication. `exemptFromQuota`: GET /v1/me,
     * which keeps working once the quota is used up.
     */
    check(exemptFromQuota: boolean): Record<string, string> {
      const now = options.now()
      const start = Math.floor(now / MINUTE) * MINUTE
      if (start !== windowStart) {
        windowStart = start
        inWindow = 0
      }
      const date = new Date(now)
      const thisMonth = `${date.getUTCFullYear()}-${date.getUTCMonth()}`
      if (thisMonth !== month) {
        month = thisMonth
        used = 0
      }
      const reset = start + MINUTE
      // The window's own end on the emulator's clock, a multiple of 60 s: the same
      // value for every answer of one window. The answers' Date header is on that
      // clock too, so a client's reset minus Date is the time left.
      const rateHeaders = (remaining: number) => ({
        'X-RateLimit-Limit': String(limit),
        'X-RateLimit-Remaining': String(Math.max(0, remaining)),
        'X-RateLimit-Reset': String(reset / 1000),
      })
      const retryAfter = (at: number) =>
        String(Math.max(1, Math.ceil((at - now) / options.timeScale / 1000)))
      if (inWindow >= limit) {
        throw new ApiError('rate_limited', `Rate limit of ${limit} requests per minute reached.`, {
          headers: { ...rateHeaders(0), 'Retry-After': retryAfter(reset) },
        })
      }
      if (used >= quota && !exemptFromQuota) {
        const next = Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1)
        throw new ApiError('quota_exceeded', `Monthly quota of ${quota} calls used up.`, {
          headers: { ...rateHeaders(limit - inWindow), 'Retry-After': retryAfter(next) },
        })
      }
      const headers = {
        ...rateHeaders(limit - inWindow - 1),
        'X-Quota-Used': String(used),
        'X-Quota-Limit': String(quota),
      }
      inWindow++
      used++
      return headers
    },
  }
}

/** What {@link createRateLimiter} returns. */
export type RateLimiter = ReturnType<typeof createRateLimiter>

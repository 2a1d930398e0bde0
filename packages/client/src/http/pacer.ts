import type { QuotaState, RateLimitState } from '../types.js'
import { delay } from './delay.js'

/**
 * Keeps a client under the service's fixed-window rate limit, from the
 * `X-RateLimit-*` headers of its own answers, so bulk work waits for the window
 * to clear instead of running into 429 after 429. Shared by every call of one
 * client, so concurrent calls take from the same budget: a call may go out while
 * the window's remaining count, less the calls still in flight, is above zero.
 */
export class Pacer {
  /** The smallest remaining count the service reported for the current window. */
  #remaining: number | undefined
  #inFlight = 0
  /** When the window clears, on this machine's clock (ms). */
  #resetAt = 0
  /** The service's own name for the current window: its reset time. */
  #window = 0
  #state: RateLimitState | undefined
  #quota: QuotaState | undefined
  #waiters: (() => void)[] = []
  readonly #now: () => number

  constructor(now: () => number) {
    this.#now = now
  }

  /** What the last answer said, or undefined before the first. */
  get state(): RateLimitState | undefined {
    return this.#state
  }

  /** The monthly quota as the last answer that carried it reported it, or undefined before. */
  get quota(): QuotaState | undefined {
    return this.#quota
  }

  /** Real ms until the current rate-limit window clears (0 when it has, or none is known). */
  msUntilReset(): number {
    return Math.max(0, this.#resetAt - this.#now())
  }

  /** Waits until a request may go out, and counts it in flight until {@link release}. */
  async acquire(signal?: AbortSignal): Promise<void> {
    for (;;) {
      const now = this.#now()
      // A new window: the whole limit again, until an answer says otherwise.
      if (now >= this.#resetAt && this.#remaining !== undefined)
        this.#remaining = this.#state?.limit
      if (this.#remaining === undefined || this.#remaining - this.#inFlight > 0) break
      if (now < this.#resetAt) await delay(this.#resetAt - now, signal)
      else await this.#nextRelease(signal)
    }
    this.#inFlight++
  }

  /** The call is over; `headers` are its answer's, when there was one. */
  release(headers?: Headers): void {
    this.#inFlight--
    if (headers) this.#update(headers)
    for (const wake of this.#waiters.splice(0)) wake()
  }

  /** A 429 said to wait: no request goes out before then. */
  block(ms: number): void {
    this.#resetAt = Math.max(this.#resetAt, this.#now() + ms)
    this.#remaining = 0
  }

  #update(headers: Headers): void {
    this.#updateQuota(headers)
    const limit = Number(headers.get('x-ratelimit-limit'))
    const remaining = Number(headers.get('x-ratelimit-remaining'))
    const reset = Number(headers.get('x-ratelimit-reset'))
    // Answers to 401 and to 429 carry no quota headers; 401s no rate headers either.
    if (
      !headers.has('x-ratelimit-remaining') ||
      !Number.isFinite(remaining) ||
      !Number.isFinite(reset)
    ) {
      return
    }
    if (!(limit > 0)) return // a proxy that drops the limit must not stall the client
    this.#state = { limit, remaining, reset }
    // Reset is the service's Unix time; its Date header says what time the
    // service thinks it is, so clock skew between the two machines cancels.
    // Date has whole seconds, so the estimate errs on the side of waiting longer.
    const serverNow = Date.parse(headers.get('date') ?? '')
    const untilReset = reset * 1000 - (Number.isFinite(serverNow) ? serverNow : Date.now())
    const resetAt = this.#now() + Math.max(0, untilReset)
    // Answers can arrive out of order: a later window wins, an earlier one is
    // old news, and within one window the smallest remaining count is the true one.
    if (reset > this.#window) {
      this.#window = reset
      this.#resetAt = Math.max(resetAt, this.#resetAt)
      this.#remaining = remaining
    } else if (reset === this.#window) {
      this.#remaining = Math.min(this.#remaining ?? remaining, remaining)
    }
  }

  /** X-Quota-Used counts the month's calls before this one: this one makes it one more. */
  #updateQuota(headers: Headers): void {
    const used = Number(headers.get('x-quota-used'))
    const limit = Number(headers.get('x-quota-limit'))
    if (!headers.has('x-quota-used') || !Number.isSafeInteger(used) || !(limit > 0)) return
    // Answers may come out of order: within a month the count only grows.
    const before = this.#quota
    if (before && before.limit === limit && before.usedBefore > used) return
    this.#quota = {
      usedBefore: used,
      used: used + 1,
      limit,
      remaining: Math.max(0, limit - used - 1),
    }
  }

  #nextRelease(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason)
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(signal?.reason)
      signal?.addEventListener('abort', onAbort, { once: true })
      this.#waiters.push(() => {
        signal?.removeEventListener('abort', onAbort)
        resolve()
      })
    })
  }
}

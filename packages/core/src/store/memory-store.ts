import {
  type BeginInput,
  type BeginResult,
  type Claim,
  type EventStore,
  type FailureStreak,
  type MaybePromise,
  NO_STREAK,
  type PeekInput,
  type PeekResult,
  resolveStoreTimings,
  STREAK_CODES_KEPT,
  type StoreTimings,
} from './event-store.js'
import { ExpiringMap, ExpiringSet } from './expiring-map.js'

/** Options of {@link memoryStore}; every one has a default. */
export interface MemoryStoreOptions extends StoreTimings {
  /** Most events remembered as done; the oldest are forgotten first. Default 100,000. */
  maxEvents?: number | undefined
  /**
   * Most conversions whose watermark is kept. Default 100,000. Past it the oldest
   * watermarks are forgotten first, and with them the ordering of those
   * conversions: a late older event of one of them is handled instead of dropped
   * as `stale`. Raise it above the conversions active within `orderingTtl`, or use
   * a shared store. The store has no logger, so reaching it is not logged.
   */
  maxConversions?: number | undefined
  /** Clock in ms, for tests. Default `Date.now`. */
  now?: (() => number) | undefined
}

/**
 * A running attempt's hold on its event (the lease) and its conversion (the
 * lock): one object for both, so renewing it renews both. It is also the claim
 * handed to the receiver, which spares an object per delivery.
 */
interface Hold extends Claim {
  expiresAt: number
}

const DONE = { status: 'duplicate' } as const
const STALE = { status: 'stale' } as const
const IN_PROGRESS = { status: 'in_progress' } as const

type Timings = ReturnType<typeof resolveStoreTimings>

/**
 * What outlives an attempt: events done, and each conversion's watermark (newest
 * order handled). Both start empty and grow with use, up to their bounds.
 */
interface Settled {
  done: ExpiringSet<string>
  watermarks: ExpiringMap<number, number>
}

function settledState(options: MemoryStoreOptions, timings: Timings): Settled {
  return {
    done: new ExpiringSet(
      options.maxEvents ?? 100_000,
      timings.dedupeTtl,
      'memoryStore: `maxEvents`',
    ),
    watermarks: new ExpiringMap(
      options.maxConversions ?? 100_000,
      timings.orderingTtl,
      'memoryStore: `maxConversions`',
    ),
  }
}

/** True when the conversion has handled an event at or after this order. */
function isStale(settled: Settled, conversionId: number, order: number, at: number): boolean {
  const watermark = settled.watermarks.get(conversionId, at)
  return watermark !== undefined && watermark >= order
}

/**
 * A Map that never empties: it holds one entry under a key of its own. V8 gives
 * a Map that a delete leaves empty a new table, and the next set grows it again:
 * two allocations and a runtime call per delivery for the leases and the locks,
 * which are empty between deliveries. Only `get`, `set` and `delete` by real
 * keys are used, so the extra entry is never seen.
 */
function keptMap<K>(): Map<K, Hold> {
  const map = new Map<K | typeof KEEP, Hold>()
  map.set(KEEP, NO_HOLD)
  return map as Map<K, Hold>
}
const KEEP = Symbol('kept')
const NO_HOLD: Hold = { eventId: '', order: 0, token: '', expiresAt: 0 }

/**
 * Leases (per event) and locks (per conversion) held by running attempts, and
 * the attempts waiting for a lock. They live only as long as an attempt runs, so
 * their count is bounded by the requests in flight; expired ones are dropped when met.
 */
class Holds {
  readonly leases = keptMap<string>()
  readonly locks = keptMap<number>()
  readonly #waiters = new Map<number, Set<() => void>>()
  #counter = 0

  /** A fresh hold's token. */
  nextToken(): string {
    return `${++this.#counter}`
  }

  /** The hold under `key` if it has not run out at `at`. */
  live<K>(map: Map<K, Hold>, key: K, at: number): Hold | undefined {
    const hold = map.get(key)
    if (hold !== undefined && hold.expiresAt <= at) {
      map.delete(key)
      return undefined
    }
    return hold
  }

  /** Drops the conversion's lock and wakes whoever waits for it. */
  unlock(conversionId: number): void {
    this.locks.delete(conversionId)
    if (this.#waiters.size === 0) return
    const wake = this.#waiters.get(conversionId)
    if (wake === undefined) return
    this.#waiters.delete(conversionId)
    for (const resolve of wake) resolve()
  }

  /** Resolves when the conversion's lock is dropped or after `ms`, whichever is first. */
  waitForUnlock(conversionId: number, ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      let set = this.#waiters.get(conversionId)
      if (set === undefined) {
        set = new Set()
        this.#waiters.set(conversionId, set)
      }
      const wake = () => {
        clearTimeout(timer)
        set.delete(wake)
        if (set.size === 0 && this.#waiters.get(conversionId) === set) {
          this.#waiters.delete(conversionId)
        }
        resolve()
      }
      const timer = setTimeout(wake, ms)
      set.add(wake)
    })
  }
}

/** One atomic look: an answer, or the lock to wait for. */
function attempt(
  settled: Settled,
  holds: Holds,
  input: BeginInput,
  leaseMs: number,
  at: number,
): BeginResult | Hold {
  const { eventId, conversionId, order } = input
  if (settled.done.has(eventId, at)) return DONE
  if (holds.live(holds.leases, eventId, at)) return IN_PROGRESS
  if (conversionId !== undefined) {
    if (isStale(settled, conversionId, order, at)) {
      settled.done.add(eventId, at)
      return STALE
    }
    const lock = holds.live(holds.locks, conversionId, at)
    if (lock !== undefined) return lock
  }
  const hold: Hold = {
    eventId,
    conversionId,
    order,
    token: holds.nextToken(),
    leaseMs,
    expiresAt: at + leaseMs,
  }
  holds.leases.set(eventId, hold)
  if (conversionId !== undefined) holds.locks.set(conversionId, hold)
  return { status: 'claimed', claim: hold }
}

/** `begin`: synchronous unless the conversion is locked, then it waits for the lock. */
function beginStep(
  settled: Settled,
  holds: Holds,
  { leaseMs: defaultLeaseMs, lockWaitMs }: Timings,
  now: () => number,
): (input: BeginInput) => MaybePromise<BeginResult> {
  async function waitAndBegin(input: BeginInput, leaseMs: number, lock: Hold, deadline: number) {
    for (;;) {
      const at = now()
      if (at >= deadline) return IN_PROGRESS
      // Wake on release, or when the holder's lease runs out, or at the deadline.
      await holds.waitForUnlock(
        input.conversionId as number,
        Math.min(deadline, lock.expiresAt) - at,
      )
      const result = attempt(settled, holds, input, leaseMs, now())
      if ('status' in result) return result
      lock = result
    }
  }
  return (input) => {
    const leaseMs = input.leaseMs ?? defaultLeaseMs
    const at = now()
    const result = attempt(settled, holds, input, leaseMs, at)
    return 'status' in result ? result : waitAndBegin(input, leaseMs, result, at + lockWaitMs)
  }
}

function commitClaim(settled: Settled, holds: Holds, claim: Claim, at: number): boolean {
  const lease = holds.leases.get(claim.eventId)
  // A newer attempt took the lease over, or (once ours ran out) one already
  // committed: change nothing. Holding the lease means nobody else could.
  if (lease === undefined ? settled.done.has(claim.eventId, at) : lease.token !== claim.token) {
    return false
  }
  holds.leases.delete(claim.eventId)
  settled.done.add(claim.eventId, at)
  const { conversionId } = claim
  if (conversionId !== undefined) {
    if (!isStale(settled, conversionId, claim.order, at)) {
      settled.watermarks.set(conversionId, claim.order, at)
    }
    if (holds.locks.get(conversionId)?.token === claim.token) holds.unlock(conversionId)
  }
  return true
}

/** The lease and lock of one attempt are one Hold: pushing its end out renews both. */
function extendClaim(holds: Holds, claim: Claim, leaseMs: number, at: number): boolean {
  const lease = holds.live(holds.leases, claim.eventId, at)
  if (lease === undefined || lease.token !== claim.token) return false
  lease.expiresAt = at + leaseMs
  return true
}

function releaseClaim(holds: Holds, claim: Claim): void {
  if (holds.leases.get(claim.eventId)?.token === claim.token) holds.leases.delete(claim.eventId)
  const { conversionId } = claim
  if (conversionId !== undefined && holds.locks.get(conversionId)?.token === claim.token) {
    holds.unlock(conversionId)
  }
}

function peekSettled(
  settled: Settled,
  { eventId, conversionId, order }: PeekInput,
  at: number,
): PeekResult {
  if (settled.done.has(eventId, at)) return 'duplicate'
  if (conversionId === undefined) return 'unsettled'
  return isStale(settled, conversionId, order, at) ? 'stale' : 'unsettled'
}

/**
 * A failure streak kept in this process: the memory store's own, and the
 * receiver's fallback for a store that does not count answers.
 */
export function localFailureStreak(): (code: string | null) => FailureStreak {
  let streak: FailureStreak = NO_STREAK
  return (code) => {
    if (code === null) {
      streak = NO_STREAK
    } else {
      const recentCodes = [code, ...streak.recentCodes.slice(0, STREAK_CODES_KEPT - 1)]
      streak = { count: streak.count + 1, recentCodes }
    }
    return streak
  }
}

/**
 * An {@link EventStore} in this process's memory, bounded in entries and time.
 * It answers synchronously unless an event must wait for another one of its
 * conversion. It cannot see other processes or serverless instances: use the
 * Redis store there.
 */
export function memoryStore(options: MemoryStoreOptions = {}): EventStore {
  const now = options.now ?? Date.now
  const timings = resolveStoreTimings(options, 'memoryStore')
  const settled = settledState(options, timings)
  const holds = new Holds()
  return {
    begin: beginStep(settled, holds, timings, now),
    commit: (claim) => commitClaim(settled, holds, claim, now()),
    release: (claim) => releaseClaim(holds, claim),
    extend: (claim, leaseMs) => extendClaim(holds, claim, leaseMs, now()),
    peek: (input) => peekSettled(settled, input, now()),
    recordAnswer: localFailureStreak(),
    // Nothing to end: the state lives in this process.
    close: () => Promise.resolve(),
  }
}

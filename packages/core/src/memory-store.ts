import { LRUCache } from 'lru-cache'
import {
  type BeginInput,
  type BeginResult,
  type Claim,
  type EventStore,
  type MaybePromise,
  type PeekInput,
  type PeekResult,
  resolveStoreTimings,
  type StoreTimings,
} from './store.js'

/** Options of {@link memoryStore}; every one has a default. */
export interface MemoryStoreOptions extends StoreTimings {
  /** Most events remembered as done; the oldest are forgotten first. Default 100,000. */
  maxEvents?: number | undefined
  /** Most conversions whose watermark is kept. Default 100,000. */
  maxConversions?: number | undefined
  /** Clock in ms, for tests. Default `Date.now`. */
  now?: (() => number) | undefined
}

interface Hold {
  token: string
  expiresAt: number
}

const DONE = { status: 'duplicate' } as const
const STALE = { status: 'stale' } as const
const IN_PROGRESS = { status: 'in_progress' } as const

/**
 * An {@link EventStore} in this process's memory, bounded in entries and time.
 * It answers synchronously unless an event must wait for another one of its
 * conversion. It cannot see other processes or serverless instances: use the
 * Redis store there.
 */
export function memoryStore(options: MemoryStoreOptions = {}): EventStore {
  const now = options.now ?? Date.now
  const timings = resolveStoreTimings(options, 'memoryStore')
  const { lockWaitMs, leaseMs: defaultLeaseMs } = timings
  // An injected clock must be read on every check (ttlResolution 0); lru-cache's
  // own clock may be cached for a millisecond, which is cheaper.
  const timing = options.now ? { perf: { now }, ttlResolution: 0 } : {}
  const done = new LRUCache<string, true>({
    max: options.maxEvents ?? 100_000,
    ttl: timings.dedupeTtl,
    ...timing,
  })
  const watermarks = new LRUCache<number, number>({
    max: options.maxConversions ?? 100_000,
    ttl: timings.orderingTtl,
    ...timing,
  })
  // Leases and locks live only as long as an attempt runs, so their count is
  // bounded by the requests in flight; expired ones are dropped when met.
  const leases = new Map<string, Hold>()
  const locks = new Map<number, Hold>()
  const waiters = new Map<number, Set<() => void>>()
  let counter = 0

  const live = <K>(map: Map<K, Hold>, key: K, at: number): Hold | undefined => {
    const hold = map.get(key)
    if (hold !== undefined && hold.expiresAt <= at) {
      map.delete(key)
      return undefined
    }
    return hold
  }

  const unlock = (conversionId: number) => {
    locks.delete(conversionId)
    if (waiters.size === 0) return
    const wake = waiters.get(conversionId)
    if (wake === undefined) return
    waiters.delete(conversionId)
    for (const resolve of wake) resolve()
  }

  // Resolves when the conversion's lock is dropped or after `ms`, whichever is first.
  const waitForUnlock = (conversionId: number, ms: number) =>
    new Promise<void>((resolve) => {
      let set = waiters.get(conversionId)
      if (set === undefined) {
        set = new Set()
        waiters.set(conversionId, set)
      }
      const wake = () => {
        clearTimeout(timer)
        set.delete(wake)
        if (set.size === 0 && waiters.get(conversionId) === set) waiters.delete(conversionId)
        resolve()
      }
      const timer = setTimeout(wake, ms)
      set.add(wake)
    })

  /** One atomic look: an answer, or how long to wait for the conversion's lock. */
  function attempt(input: BeginInput, leaseMs: number, at: number): BeginResult | Hold {
    const { eventId, conversionId, createdAt } = input
    if (done.has(eventId)) return DONE
    if (live(leases, eventId, at)) return IN_PROGRESS
    if (conversionId !== undefined) {
      const watermark = watermarks.get(conversionId)
      if (watermark !== undefined && watermark >= createdAt) {
        done.set(eventId, true)
        return STALE
      }
      const lock = live(locks, conversionId, at)
      if (lock !== undefined) return lock
    }
    const hold = { token: `${++counter}`, expiresAt: at + leaseMs }
    leases.set(eventId, hold)
    if (conversionId !== undefined) locks.set(conversionId, hold)
    return { status: 'claimed', claim: { eventId, conversionId, createdAt, token: hold.token } }
  }

  async function waitAndBegin(input: BeginInput, leaseMs: number, lock: Hold, deadline: number) {
    for (;;) {
      const at = now()
      if (at >= deadline) return IN_PROGRESS
      // Wake on release, or when the holder's lease runs out, or at the deadline.
      await waitForUnlock(input.conversionId as number, Math.min(deadline, lock.expiresAt) - at)
      const result = attempt(input, leaseMs, now())
      if ('status' in result) return result
      lock = result
    }
  }

  return {
    begin(input: BeginInput): MaybePromise<BeginResult> {
      const leaseMs = input.leaseMs ?? defaultLeaseMs
      const at = now()
      const result = attempt(input, leaseMs, at)
      return 'status' in result ? result : waitAndBegin(input, leaseMs, result, at + lockWaitMs)
    },

    commit(claim: Claim): boolean {
      const lease = leases.get(claim.eventId)
      // A newer attempt took the lease over, or (once ours ran out) one already
      // committed: change nothing. Holding the lease means nobody else could.
      if (lease === undefined ? done.has(claim.eventId) : lease.token !== claim.token) return false
      leases.delete(claim.eventId)
      done.set(claim.eventId, true)
      const { conversionId } = claim
      if (conversionId !== undefined) {
        const watermark = watermarks.get(conversionId)
        if (watermark === undefined || watermark < claim.createdAt) {
          watermarks.set(conversionId, claim.createdAt)
        }
        if (locks.get(conversionId)?.token === claim.token) unlock(conversionId)
      }
      return true
    },

    peek({ eventId, conversionId, createdAt }: PeekInput): PeekResult {
      if (done.has(eventId)) return 'duplicate'
      if (conversionId === undefined) return 'unsettled'
      const watermark = watermarks.get(conversionId)
      return watermark !== undefined && watermark >= createdAt ? 'stale' : 'unsettled'
    },

    release(claim: Claim): void {
      if (leases.get(claim.eventId)?.token === claim.token) leases.delete(claim.eventId)
      const { conversionId } = claim
      if (conversionId !== undefined && locks.get(conversionId)?.token === claim.token) {
        unlock(conversionId)
      }
    },
  }
}

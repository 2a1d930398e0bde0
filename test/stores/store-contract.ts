/**
 * The semantics every EventStore must have, as one list of cases. Each store's
 * test file calls `storeContract(name, factory)`; the memory store and the Redis
 * stores (single node and Cluster) run exactly these cases.
 */
import { randomUUID } from 'node:crypto'
import type { BeginResult, Claim, EventStore } from '@affiliate-webhooks/core'
import { describe, expect, it } from 'vitest'

export interface StoreFactoryOptions {
  lockWaitMs?: number
  dedupeTtl?: number
  orderingTtl?: number
  /** Key prefix, for a store shared through Redis: a case that must not see other cases' keys. */
  prefix?: string
}

export type StoreFactory = (
  options: StoreFactoryOptions,
) => EventStore<unknown> | Promise<EventStore<unknown>>

const LEASE = 10_000
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Unique ids per case, so stores shared across cases (Redis) never collide. */
function ids() {
  const run = randomUUID().slice(0, 8)
  let n = 0
  return {
    event: () => `evt_${run}_${++n}`,
    conversion: () => Math.floor(Math.random() * 2 ** 40),
  }
}

/** A begin() still pending or not, observable without waiting for it. */
function track(result: BeginResult<unknown> | Promise<BeginResult<unknown>>) {
  const state = { settled: false, promise: Promise.resolve(result) }
  state.promise.then(() => {
    state.settled = true
  })
  return state
}

function claimed(result: BeginResult<unknown>): Claim<unknown> {
  if (result.status !== 'claimed') throw new Error(`expected claimed, got ${result.status}`)
  return result.claim
}

/** Optional operations a store has, whose cases run only for it. */
export interface StoreFeatures {
  /** {@link EventStore.extend}: renewing a claim's lease. */
  extend?: boolean
}

export function storeContract(
  name: string,
  factory: StoreFactory,
  features: StoreFeatures = {},
): void {
  if (features.extend) extendContract(name, factory)
  describe(`${name}: EventStore contract`, () => {
    it('counts answers that were not 2xx in a row, keeps the latest five codes, and resets on a 2xx', async () => {
      const store = await factory({ prefix: `aw-streak-${randomUUID().slice(0, 8)}:` })
      const record = store.recordAnswer?.bind(store)
      if (record === undefined) throw new Error(`${name} does not count answers`)
      expect(await record('signature_mismatch')).toEqual({
        count: 1,
        recentCodes: ['signature_mismatch'],
      })
      const codes = ['a', 'b', 'c', 'd', 'e', 'f'].map((c) => `code_${c}`)
      let last = { count: 0, recentCodes: [] as readonly string[] }
      for (const code of codes) last = await record(code)
      expect(last).toEqual({
        count: 7,
        recentCodes: ['code_f', 'code_e', 'code_d', 'code_c', 'code_b'],
      })
      expect(await record(null)).toEqual({ count: 0, recentCodes: [] })
      expect(await record('handler_failed')).toEqual({
        count: 1,
        recentCodes: ['handler_failed'],
      })
      await record(null) // leaves no keys behind in a shared Redis
    })

    it('claims a new event, then calls it a duplicate once committed', async () => {
      const store = await factory({})
      const id = ids()
      const eventId = id.event()
      const claim = claimed(await store.begin({ eventId, order: 1000, leaseMs: LEASE }))
      expect(typeof claim.token).toBe('string')
      expect(await store.commit(claim)).toBe(true)
      expect(await store.begin({ eventId, order: 1000, leaseMs: LEASE })).toEqual({
        status: 'duplicate',
      })
    })

    it('peek reads unsettled, then duplicate once committed, then stale for older, marking nothing', async () => {
      const store = await factory({})
      if (store.peek === undefined) throw new Error(`${name} has no peek`)
      const id = ids()
      const eventId = id.event()
      const conversionId = id.conversion()
      expect(await store.peek({ eventId, conversionId, order: 2000 })).toBe('unsettled')
      const claim = claimed(
        await store.begin({ eventId, conversionId, order: 2000, leaseMs: LEASE }),
      )
      // A running attempt is not settled: the queue's own job id covers that case.
      expect(await store.peek({ eventId, conversionId, order: 2000 })).toBe('unsettled')
      expect(await store.commit(claim)).toBe(true)
      expect(await store.peek({ eventId, conversionId, order: 2000 })).toBe('duplicate')
      const older = id.event()
      expect(await store.peek({ eventId: older, conversionId, order: 1000 })).toBe('stale')
      // Peek marked nothing: the older event is still judged (and marked) by begin.
      expect(await store.begin({ eventId: older, conversionId, order: 1000 })).toEqual({
        status: 'stale',
      })
      const unrelated = id.event()
      expect(await store.peek({ eventId: unrelated, order: 1 })).toBe('unsettled')
    })

    it('says in_progress while another attempt holds the event', async () => {
      const store = await factory({})
      const eventId = ids().event()
      claimed(await store.begin({ eventId, order: 1000, leaseMs: LEASE }))
      expect((await store.begin({ eventId, order: 1000, leaseMs: LEASE })).status).toBe(
        'in_progress',
      )
    })

    it('lets the retry run after a release', async () => {
      const store = await factory({})
      const id = ids()
      const eventId = id.event()
      const conversionId = id.conversion()
      const first = claimed(
        await store.begin({ eventId, conversionId, order: 1000, leaseMs: LEASE }),
      )
      await store.release(first)
      const retry = claimed(
        await store.begin({ eventId, conversionId, order: 1000, leaseMs: LEASE }),
      )
      expect(retry.token).not.toBe(first.token)
      expect(await store.commit(retry)).toBe(true)
    })

    it('calls an older event of a conversion stale after a newer one, and remembers it', async () => {
      const store = await factory({})
      const id = ids()
      const conversionId = id.conversion()
      const newer = claimed(
        await store.begin({ eventId: id.event(), conversionId, order: 2000, leaseMs: LEASE }),
      )
      await store.commit(newer)
      const olderId = id.event()
      expect(
        (await store.begin({ eventId: olderId, conversionId, order: 1000, leaseMs: LEASE })).status,
      ).toBe('stale')
      // Once judged stale, the event is done: a retry of it is a duplicate.
      expect(
        (await store.begin({ eventId: olderId, conversionId, order: 1000, leaseMs: LEASE })).status,
      ).toBe('duplicate')
    })

    it('calls an event with the same order as the watermark stale', async () => {
      const store = await factory({})
      const id = ids()
      const conversionId = id.conversion()
      await store.commit(
        claimed(
          await store.begin({ eventId: id.event(), conversionId, order: 2000, leaseMs: LEASE }),
        ),
      )
      expect(
        (await store.begin({ eventId: id.event(), conversionId, order: 2000, leaseMs: LEASE }))
          .status,
      ).toBe('stale')
    })

    it('claims a newer event after an older one', async () => {
      const store = await factory({})
      const id = ids()
      const conversionId = id.conversion()
      await store.commit(
        claimed(
          await store.begin({ eventId: id.event(), conversionId, order: 1000, leaseMs: LEASE }),
        ),
      )
      claimed(await store.begin({ eventId: id.event(), conversionId, order: 2000, leaseMs: LEASE }))
    })

    it('keeps conversions apart', async () => {
      const store = await factory({})
      const id = ids()
      await store.commit(
        claimed(
          await store.begin({
            eventId: id.event(),
            conversionId: id.conversion(),
            order: 5000,
            leaseMs: LEASE,
          }),
        ),
      )
      claimed(
        await store.begin({
          eventId: id.event(),
          conversionId: id.conversion(),
          order: 1000,
          leaseMs: LEASE,
        }),
      )
    })

    it('makes a second event of a busy conversion wait, then run after the first commits', async () => {
      const store = await factory({ lockWaitMs: 5000 })
      const id = ids()
      const conversionId = id.conversion()
      const first = claimed(
        await store.begin({ eventId: id.event(), conversionId, order: 1000, leaseMs: LEASE }),
      )
      let settled = false
      const second = Promise.resolve(
        store.begin({ eventId: id.event(), conversionId, order: 2000, leaseMs: LEASE }),
      ).then((r) => {
        settled = true
        return r
      })
      await sleep(100)
      expect(settled).toBe(false)
      await store.commit(first)
      expect((await second).status).toBe('claimed')
    })

    it('drops a waiting older event as stale when the newer one holding the lock commits', async () => {
      const store = await factory({ lockWaitMs: 5000 })
      const id = ids()
      const conversionId = id.conversion()
      const newer = claimed(
        await store.begin({ eventId: id.event(), conversionId, order: 2000, leaseMs: LEASE }),
      )
      const older = store.begin({
        eventId: id.event(),
        conversionId,
        order: 1000,
        leaseMs: LEASE,
      })
      await sleep(50)
      await store.commit(newer)
      expect((await older).status).toBe('stale')
    })

    it('lets a waiting event through when the holder releases', async () => {
      const store = await factory({ lockWaitMs: 5000 })
      const id = ids()
      const conversionId = id.conversion()
      const first = claimed(
        await store.begin({ eventId: id.event(), conversionId, order: 2000, leaseMs: LEASE }),
      )
      const second = track(
        store.begin({ eventId: id.event(), conversionId, order: 1000, leaseMs: LEASE }),
      )
      await sleep(50)
      expect(second.settled).toBe(false)
      await store.release(first)
      expect((await second.promise).status).toBe('claimed')
    })

    it('gives up waiting after lockWaitMs with in_progress', async () => {
      const store = await factory({ lockWaitMs: 150 })
      const id = ids()
      const conversionId = id.conversion()
      claimed(await store.begin({ eventId: id.event(), conversionId, order: 1000, leaseMs: LEASE }))
      const started = Date.now()
      const second = await store.begin({
        eventId: id.event(),
        conversionId,
        order: 2000,
        leaseMs: LEASE,
      })
      expect(second.status).toBe('in_progress')
      expect(Date.now() - started).toBeGreaterThanOrEqual(140)
    })

    it('lets a retry take over an expired lease; the late commit then changes nothing', async () => {
      const store = await factory({ lockWaitMs: 5000 })
      const id = ids()
      const eventId = id.event()
      const conversionId = id.conversion()
      const slow = claimed(await store.begin({ eventId, conversionId, order: 1000, leaseMs: 100 }))
      await sleep(150)
      const retry = claimed(
        await store.begin({ eventId, conversionId, order: 1000, leaseMs: LEASE }),
      )
      // The slow attempt finishes while the retry holds the event.
      expect(await store.commit(slow)).toBe(false)
      await store.release(slow)
      // Its release did not free the retry's lock: another event of the conversion still waits.
      const other = track(
        store.begin({ eventId: id.event(), conversionId, order: 2000, leaseMs: LEASE }),
      )
      await sleep(50)
      expect(other.settled).toBe(false)
      expect(await store.commit(retry)).toBe(true)
      expect((await other.promise).status).toBe('claimed')
      expect(
        (await store.begin({ eventId, conversionId, order: 1000, leaseMs: LEASE })).status,
      ).toBe('duplicate')
    })

    it('keeps a late commit after the retry committed from changing anything', async () => {
      const store = await factory({ lockWaitMs: 100 })
      const id = ids()
      const eventId = id.event()
      const conversionId = id.conversion()
      const slow = claimed(await store.begin({ eventId, conversionId, order: 1000, leaseMs: 100 }))
      await sleep(150)
      const retry = claimed(
        await store.begin({ eventId, conversionId, order: 1000, leaseMs: LEASE }),
      )
      expect(await store.commit(retry)).toBe(true)
      // A newer event of the conversion now holds the lock...
      claimed(await store.begin({ eventId: id.event(), conversionId, order: 5000, leaseMs: LEASE }))
      // ...and the slow attempt's late commit and release leave it held.
      expect(await store.commit(slow)).toBe(false)
      await store.release(slow)
      const blocked = await store.begin({
        eventId: id.event(),
        conversionId,
        order: 9000,
        leaseMs: LEASE,
      })
      expect(blocked.status).toBe('in_progress')
    })

    it('de-duplicates events without a conversion (webhook.test) and does not order them', async () => {
      const store = await factory({})
      const id = ids()
      const eventId = id.event()
      await store.commit(claimed(await store.begin({ eventId, order: 5000, leaseMs: LEASE })))
      expect((await store.begin({ eventId, order: 5000, leaseMs: LEASE })).status).toBe('duplicate')
      claimed(await store.begin({ eventId: id.event(), order: 1, leaseMs: LEASE }))
    })

    it('forgets a handled event after dedupeTtl', async () => {
      // Long enough that the duplicate check inside it holds on a loaded machine.
      const store = await factory({ dedupeTtl: 1000 })
      const eventId = ids().event()
      await store.commit(claimed(await store.begin({ eventId, order: 1000, leaseMs: LEASE })))
      expect((await store.begin({ eventId, order: 1000, leaseMs: LEASE })).status).toBe('duplicate')
      await sleep(1100)
      claimed(await store.begin({ eventId, order: 1000, leaseMs: LEASE }))
    })

    it('forgets a conversion watermark after orderingTtl', async () => {
      const store = await factory({ orderingTtl: 200 })
      const id = ids()
      const conversionId = id.conversion()
      await store.commit(
        claimed(
          await store.begin({ eventId: id.event(), conversionId, order: 2000, leaseMs: LEASE }),
        ),
      )
      await sleep(300)
      claimed(await store.begin({ eventId: id.event(), conversionId, order: 1000, leaseMs: LEASE }))
    })

    it('serialises many concurrent events of one conversion in order, dropping older ones', async () => {
      const store = await factory({ lockWaitMs: 10_000 })
      const id = ids()
      const conversionId = id.conversion()
      const applied: number[] = []
      const orders = [5, 3, 9, 1, 7, 2, 8, 4, 6].map((n) => n * 1000)
      await Promise.all(
        orders.map(async (order) => {
          const result = await store.begin({
            eventId: id.event(),
            conversionId,
            order,
            leaseMs: LEASE,
          })
          if (result.status !== 'claimed') return
          await sleep(5)
          applied.push(order)
          await store.commit(result.claim)
        }),
      )
      // Whatever ran, ran one at a time and never went backwards.
      expect(applied).toEqual([...applied].sort((a, b) => a - b))
      expect(applied.at(-1)).toBe(9000)
    })
  })
}

/** The claim's own `extend`, which the store declared it has. */
function extendOf(store: EventStore<unknown>) {
  const extend = store.extend?.bind(store)
  if (extend === undefined) throw new Error('the store declared extend but has none')
  return extend
}

function extendContract(name: string, factory: StoreFactory): void {
  describe(`${name}: EventStore contract, extend`, () => {
    it('keeps a renewed lease, and its conversion lock, past the first lease', async () => {
      const store = await factory({ lockWaitMs: 50 })
      const extend = extendOf(store)
      const id = ids()
      const eventId = id.event()
      const conversionId = id.conversion()
      const leaseMs = 1000
      const started = performance.now()
      const claim = claimed(await store.begin({ eventId, conversionId, order: 1000, leaseMs }))
      // Renewed every 100 ms until one and a half leases have passed: each renewal
      // comes about 900 ms before the lease it renews would end, a margin a loaded
      // machine meets (with a 300 ms lease, a stall of 200 ms under a build beside
      // the suite lost it).
      while (performance.now() - started < 1.5 * leaseMs) {
        await sleep(100)
        expect(await extend(claim, leaseMs)).toBe(true)
      }
      // Half a lease past the first one: still the claim's, event and conversion both.
      expect((await store.begin({ eventId, conversionId, order: 1000 })).status).toBe('in_progress')
      const other = await store.begin({ eventId: id.event(), conversionId, order: 2000 })
      expect(other.status).toBe('in_progress')
      expect(await store.commit(claim)).toBe(true)
    })

    it('answers false and changes nothing once the lease is lost, released or committed', async () => {
      const store = await factory({})
      const extend = extendOf(store)
      const id = ids()
      const eventId = id.event()
      const conversionId = id.conversion()
      const slow = claimed(await store.begin({ eventId, conversionId, order: 1000, leaseMs: 80 }))
      await sleep(130)
      expect(await extend(slow, LEASE)).toBe(false)
      const retry = claimed(
        await store.begin({ eventId, conversionId, order: 1000, leaseMs: LEASE }),
      )
      // The lost claim cannot renew the retry's lease either.
      expect(await extend(slow, LEASE)).toBe(false)
      expect(await extend(retry, LEASE)).toBe(true)
      expect(await store.commit(retry)).toBe(true)
      expect(await extend(retry, LEASE)).toBe(false)
      const released = claimed(await store.begin({ eventId: id.event(), order: 1, leaseMs: LEASE }))
      await store.release(released)
      expect(await extend(released, LEASE)).toBe(false)
    })

    it('lets a retry in soon after the renewals stop, however long they went on', async () => {
      const store = await factory({})
      const extend = extendOf(store)
      const eventId = ids().event()
      const leaseMs = 1000
      const started = performance.now()
      const dead = claimed(await store.begin({ eventId, order: 1000, leaseMs }))
      // As above: renewals 900 ms before each lease would end, for a lease and a half.
      while (performance.now() - started < 1.5 * leaseMs) {
        await sleep(100)
        expect(await extend(dead, leaseMs)).toBe(true)
      }
      // Its process died here: no more renewals, and one lease later it is free.
      expect((await store.begin({ eventId, order: 1000, leaseMs: LEASE })).status).toBe(
        'in_progress',
      )
      await sleep(leaseMs + 50)
      claimed(await store.begin({ eventId, order: 1000, leaseMs: LEASE }))
    })
  })
}

import { memoryStore } from '@affiliate-webhooks/core'
import { describe, expect, it } from 'vitest'
import { storeContract } from './store-contract.js'

storeContract('memoryStore', (options) => memoryStore(options), { extend: true })

describe('memoryStore bounds', () => {
  it('keeps at most maxEvents handled ids, forgetting the oldest', async () => {
    const store = memoryStore({ maxEvents: 3 })
    for (const n of [1, 2, 3, 4]) {
      const begun = await store.begin({ eventId: `evt_${n}`, order: n, leaseMs: 1000 })
      if (begun.status !== 'claimed') throw new Error(begun.status)
      await store.commit(begun.claim)
    }
    expect((await store.begin({ eventId: 'evt_4', order: 4, leaseMs: 1000 })).status).toBe(
      'duplicate',
    )
    expect((await store.begin({ eventId: 'evt_1', order: 1, leaseMs: 1000 })).status).toBe(
      'claimed',
    )
  })

  it('follows an injected clock for every expiry', async () => {
    let clock = 1_000_000
    const store = memoryStore({ now: () => clock, dedupeTtl: 60_000 })
    const begun = await store.begin({ eventId: 'evt_clock', order: 1, leaseMs: 30_000 })
    if (begun.status !== 'claimed') throw new Error(begun.status)
    clock += 29_000
    expect((await store.begin({ eventId: 'evt_clock', order: 1, leaseMs: 30_000 })).status).toBe(
      'in_progress',
    )
    clock += 2_000
    const retry = await store.begin({ eventId: 'evt_clock', order: 1, leaseMs: 30_000 })
    if (retry.status !== 'claimed') throw new Error(retry.status)
    await store.commit(retry.claim)
    clock += 59_000
    expect((await store.begin({ eventId: 'evt_clock', order: 1, leaseMs: 30_000 })).status).toBe(
      'duplicate',
    )
    clock += 2_000
    expect((await store.begin({ eventId: 'evt_clock', order: 1, leaseMs: 30_000 })).status).toBe(
      'claimed',
    )
  })

  it.each([
    ['maxEvents', 0],
    ['maxEvents', Number.POSITIVE_INFINITY],
    ['maxConversions', 0],
    ['maxConversions', 2.5],
  ])('names the option in its error for %s: %s', (option, value) => {
    expect(() => memoryStore({ [option]: value })).toThrow(
      new TypeError(`memoryStore: \`${option}\` must be a whole number >= 1; got ${value}`),
    )
  })

  it('forgets the oldest watermark past maxConversions, and with it the order of that conversion', async () => {
    const store = memoryStore({ maxConversions: 1 })
    const handle = async (eventId: string, conversionId: number, order: number) => {
      const begun = await store.begin({ eventId, conversionId, order, leaseMs: 1000 })
      if (begun.status === 'claimed') await store.commit(begun.claim)
      return begun.status
    }
    expect(await handle('evt_a2', 1, 2)).toBe('claimed')
    expect(await handle('evt_a1', 1, 1)).toBe('stale')
    // A second conversion pushes the first one's watermark out.
    expect(await handle('evt_b1', 2, 1)).toBe('claimed')
    expect(await handle('evt_a0', 1, 0)).toBe('claimed')
  })
})

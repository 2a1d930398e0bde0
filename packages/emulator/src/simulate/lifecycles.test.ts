import { describe, expect, it } from 'vitest'
import { BATCH_INTERVAL_MS } from '../delivery/schedule.js'
import { LIFECYCLE, planLifecycles } from './lifecycles.js'
import { seededRandom } from './random.js'

const plan = (seed: number, conversions = 200) =>
  planLifecycles({
    conversions,
    random: seededRandom(seed),
    startAt: Date.UTC(2026, 10, 21),
    windowMs: 30 * 60_000,
    firstConversionId: 5000,
  })

describe('planLifecycles', () => {
  it('makes created -> approved -> available -> ready_for_payout, some rejected on the way', () => {
    const plans = plan(1)
    expect(plans).toHaveLength(200)
    const rejected = plans.filter((p) => p.at(-1)?.event.data.conversion.status === 'rejected')
    // About one in five, as the default reject rate says.
    expect(rejected.length).toBeGreaterThan(20)
    expect(rejected.length).toBeLessThan(70)
    for (const [n, events] of plans.entries()) {
      const statuses = events.map((p) => p.event.data.conversion.status)
      const path = statuses.at(-1) === 'rejected' ? statuses.slice(0, -1) : statuses
      expect(path).toEqual(LIFECYCLE.slice(0, path.length))
      expect(events.map((p) => p.event.type)).toEqual(
        events.map((_, step) => (step === 0 ? 'conversion.created' : 'conversion.updated')),
      )
      expect(new Set(events.map((p) => p.event.data.conversion.id))).toEqual(new Set([5000 + n]))
      for (let step = 1; step < events.length; step++) {
        const previous = events[step - 1]
        const current = events[step]
        // Each step a batch or more after the last, with createdAt saying when.
        expect((current?.at ?? 0) - (previous?.at ?? 0)).toBeGreaterThanOrEqual(BATCH_INTERVAL_MS)
        expect(current?.event.createdAt).toBe(new Date(current?.at ?? 0).toISOString())
      }
    }
  })

  it('keeps amounts as decimal strings and zeroes a rejected commission', () => {
    for (const events of plan(2)) {
      for (const { event } of events) {
        const { saleAmount, commission, status } = event.data.conversion
        expect(saleAmount).toMatch(/^\d+\.\d{2}$/)
        expect(commission).toMatch(/^\d+\.\d{2}$/)
        if (status === 'rejected') expect(commission).toBe('0.00')
      }
    }
  })

  it('plans the same run for the same seed, a different one for another', () => {
    const shape = (seed: number) =>
      plan(seed, 30).map((events) => events.map((p) => `${p.at}:${p.event.data.conversion.status}`))
    expect(shape(7)).toEqual(shape(7))
    expect(shape(7)).not.toEqual(shape(8))
  })
})

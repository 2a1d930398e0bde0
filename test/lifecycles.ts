/** Conversion lifecycles as the service emits them, for stream tests. */
import type { ConversionEvent } from '@affiliate-webhooks/core'
import { buildConversionEvent } from '@affiliate-webhooks/core/testing'

const PATH = ['pending', 'approved', 'available', 'ready_for_payout'] as const

/** A seeded generator, so a failing stream can be replayed. */
export function random(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** created -> approved -> available -> ready_for_payout, about one in five rejected on the way. */
export function lifecycles(count: number, rand: () => number, firstId = 1): ConversionEvent[] {
  const events: ConversionEvent[] = []
  const base = Date.now() - 3_600_000
  for (let n = 0; n < count; n++) {
    const id = firstId + n
    const rejectAt = rand() < 0.2 ? 1 + Math.floor(rand() * 3) : -1
    const statuses = rejectAt === -1 ? [...PATH] : [...PATH.slice(0, rejectAt), 'rejected']
    statuses.forEach((status, step) => {
      events.push(
        buildConversionEvent({
          type: step === 0 ? 'conversion.created' : 'conversion.updated',
          createdAt: base + n * 10 + step * 1000,
          conversion: { id, status, commission: (step + 1).toFixed(2) },
        }),
      )
    })
  }
  return events
}

export function shuffle<T>(items: T[], rand: () => number): T[] {
  const out = [...items]
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1))
    ;[out[i], out[j]] = [out[j] as T, out[i] as T]
  }
  return out
}

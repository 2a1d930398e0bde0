/** Conversion lifecycles for the stream tests, from the CLI's own generator. */

import type { ConversionEvent } from '@affiliate-webhooks/core'
import { planLifecycles, seededRandom } from '@affiliate-webhooks/emulator/internal'

/** A seeded generator, so a failing stream can be replayed. */
export const random = seededRandom

/** created -> approved -> available -> ready_for_payout, some rejected on the way; every event, oldest first per conversion. */
export function lifecycles(count: number, rand: () => number, firstId = 1): ConversionEvent[] {
  return planLifecycles({
    conversions: count,
    random: rand,
    startAt: Date.now() - 3_600_000,
    windowMs: 60_000,
    firstConversionId: firstId,
  }).flatMap((plan) => plan.map(({ event }) => event))
}

export function shuffle<T>(items: T[], rand: () => number): T[] {
  const out = [...items]
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1))
    ;[out[i], out[j]] = [out[j] as T, out[i] as T]
  }
  return out
}

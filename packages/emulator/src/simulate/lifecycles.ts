import type { ConversionEvent, ConversionStatus } from '@affiliate-webhooks/core'
import { buildConversionEvent } from '@affiliate-webhooks/core/testing'
import { BATCH_INTERVAL_MS } from '../delivery/schedule.js'

/** Share of conversions rejected on the way, unless told otherwise. */
export const DEFAULT_REJECT_RATE = 0.2

/** The path a conversion normally takes; any step after the first may turn into `rejected`. */
export const LIFECYCLE: readonly ConversionStatus[] = [
  'pending',
  'approved',
  'available',
  'ready_for_payout',
]

/** How many conversion lifecycles {@link planLifecycles} makes, and when they start. */
export interface PlanLifecyclesOptions {
  /** How many conversions. */
  conversions: number
  /** Source of every random choice, in [0, 1): {@link seededRandom} to repeat a plan. */
  random: () => number
  /** Service time the first conversion may start, epoch ms. */
  startAt: number
  /** Conversions start spread over this many service ms. */
  windowMs: number
  /** Share of conversions rejected on the way. Default 0.2. */
  rejectRate?: number
  /** Id of the first conversion; the others follow. */
  firstConversionId: number
  /** Least service time between two steps of one conversion. Default one batch (a minute). */
  minStepGapMs?: number
  /**
   * The createdAt of an event occurring at service time `at`. Default `at`. A
   * simulation whose clock runs faster than real time maps it back to the real
   * time it occurs at: deliveries are signed with real time, and a receiver
   * refuses an event created after its signature.
   */
  stamp?: (at: number) => number
}

/** One event of a plan: what occurs, and when (service time). */
export interface PlannedEvent {
  /** The event, its createdAt being `stamp(at)` (`at` by default). */
  event: ConversionEvent
  /** Service time it occurs, epoch ms. */
  at: number
}

const money = (value: number) => value.toFixed(2)

/**
 * Conversion lifecycles as the service emits them: `conversion.created` (pending),
 * then `conversion.updated` for approved, available, ready_for_payout, or rejected
 * on the way. Steps of one conversion are at least one batch apart, so each has a
 * later createdAt. Returns one array of events per conversion, oldest first.
 */
export function planLifecycles(options: PlanLifecyclesOptions): PlannedEvent[][] {
  const { random, startAt, windowMs, firstConversionId } = options
  const rejectRate = options.rejectRate ?? DEFAULT_REJECT_RATE
  const minGap = options.minStepGapMs ?? BATCH_INTERVAL_MS
  const plans: PlannedEvent[][] = []
  for (let n = 0; n < options.conversions; n++) {
    const id = firstConversionId + n
    const rejectAt = random() < rejectRate ? 1 + Math.floor(random() * (LIFECYCLE.length - 1)) : -1
    const statuses = rejectAt === -1 ? LIFECYCLE : [...LIFECYCLE.slice(0, rejectAt), 'rejected']
    const saleAmount = 10 + random() * 490
    const commission = saleAmount * (0.03 + random() * 0.09)
    const conversion = {
      id,
      programId: 40 + Math.floor(random() * 20),
      channelId: 7 + Math.floor(random() * 3),
      saleAmount: money(saleAmount),
      commission: money(commission),
      currency: 'EUR',
    }
    const stamp = options.stamp ?? ((at: number) => at)
    let at = startAt + Math.floor(random() * windowMs)
    let stamped = Number.NEGATIVE_INFINITY
    const occurredAt = new Date(at - Math.floor(random() * 3_600_000)).toISOString()
    const plan: PlannedEvent[] = []
    for (const [step, status] of statuses.entries()) {
      if (step > 0) at += minGap + Math.floor((random() * windowMs) / 4)
      // Strictly later than the step before, however much the stamp compresses time.
      stamped = Math.max(Math.floor(stamp(at)), stamped + 1)
      plan.push({
        at,
        event: buildConversionEvent({
          type: step === 0 ? 'conversion.created' : 'conversion.updated',
          createdAt: stamped,
          conversion: {
            ...conversion,
            status,
            // A rejected sale earns nothing.
            commission: status === 'rejected' ? '0.00' : conversion.commission,
            occurredAt,
          },
        }),
      })
    }
    plans.push(plan)
  }
  return plans
}

import type { ReceiveResult } from '../http/answer.js'
import type { HeadersInput } from '../http/headers.js'
import type { DeliveryInput } from '../signature/verify.js'
import {
  type EventStore,
  type FailureStreak,
  isPromiseLike,
  type MaybePromise,
} from '../store/event-store.js'
import { localFailureStreak } from '../store/memory-store.js'
import { createDeliveryLog } from '../telemetry/delivery-log.js'
import { failureStreakWarning } from '../telemetry/failure-streak.js'
import type { DeliveryTrace, ReceiverTelemetry } from '../telemetry/otel-telemetry.js'
import type { Setup } from './setup.js'

const NO_BODY = new Uint8Array(0)

/**
 * Step 3: what happens to every answer of the pipeline once it is decided. A
 * delivery not acknowledged is logged; every answer goes into the failure streak
 * (in the store, so every process counts together), whose warnings come at 5,
 * 10 and 15; and the delivery's span and metrics are finished.
 */
export function createSettle(setup: Setup, telemetry: { current: ReceiverTelemetry | undefined }) {
  const { logger, store } = setup
  const log = logger && createDeliveryLog(logger)
  const shared: ((code: string | null) => MaybePromise<FailureStreak>) | undefined =
    typeof store.recordAnswer === 'function'
      ? (code) => (store.recordAnswer as NonNullable<EventStore<unknown>['recordAnswer']>)(code)
      : undefined
  // This process's own count, always kept: the streak of a store without
  // recordAnswer, and the one that still warns while the store cannot count
  // (a Redis outage is itself a streak that gets endpoints disabled).
  const local = localFailureStreak()

  const noteStreak = (streak: FailureStreak) => {
    if (telemetry.current !== undefined) telemetry.current.streak = streak.count
    if (streak.count === 0) return
    const warning = logger && failureStreakWarning(streak)
    if (warning) logger.warn(warning)
  }

  const countAnswer = (code: string | null) => {
    // Counting never delays nor changes the answer.
    const mine = local(code)
    if (shared === undefined) return noteStreak(mine)
    try {
      const streak = shared(code)
      if (isPromiseLike(streak)) Promise.resolve(streak).then(noteStreak, () => noteStreak(mine))
      else noteStreak(streak)
    } catch {
      noteStreak(mine)
    }
  }

  const settle = (
    result: ReceiveResult,
    input: DeliveryInput,
    trace: DeliveryTrace | undefined,
  ) => {
    if (result.status >= 300) {
      if (log) {
        try {
          log(result, input)
        } catch {
          // A logger that throws must not change the answer.
        }
      }
      countAnswer(result.error?.code ?? 'internal_error')
    } else {
      countAnswer(null)
    }
    if (trace !== undefined) trace.end(result)
    return result
  }
  /** The log line of an adapter's refusal: only the headers are known. */
  const logRefusal = (result: ReceiveResult, headers: HeadersInput) => {
    if (!log) return
    try {
      log(result, { headers, rawBody: NO_BODY })
    } catch {
      // A logger that throws must not change the answer.
    }
  }
  return { settle, countAnswer, logRefusal }
}

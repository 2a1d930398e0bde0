import { readReceiverAnswer } from '@affiliate-webhooks/core/internal'
import type { Delivery, RateLimitState } from '../types.js'
import type { FollowPlan, QuotaStop } from './follow-pacing.js'

/** One attempt of a delivery, as `followDeliveries` and `followDeliveryAttempts` saw it. */
export interface AttemptSeen {
  type: 'attempt'
  /** When it was seen (ISO). */
  at: string
  /** The endpoint the delivery goes to. */
  endpointId: string
  deliveryId: string
  eventId: string | null
  eventType: string | null
  /** The attempt's number in its round, when the service says. */
  attempt: number | null
  /** The delivery's status after it: succeeded, retrying or failed. */
  status: string
  responseStatus: number | null
  /** The receiver's outcome (`processed`, `duplicate`, `stale`...), when its 2xx answer said one. */
  outcome: string | null
  /** The receiver's own error code (`signature_mismatch`...), when it answered one. */
  errorCode: string | null
  durationMs: number | null
  /** Why nothing answered (refused, timed out). */
  errorMessage: string | null
  /** When the next attempt is due (ISO), while retrying, when the service says (the emulator does). */
  nextAttemptAt: string | null
}

/** One thing `followDeliveries` saw happen. */
export type FollowEvent =
  | AttemptSeen
  | { type: 'endpoint'; at: string; endpointId: string; status: string }

/** How `followDeliveries` paces itself, and why it stopped: for the caller to say. */
export type FollowNotice =
  /** Before the first look: the interval and what it costs. */
  | { type: 'plan'; at: string; plan: FollowPlan }
  /** The account's rate-limit window is nearly used up: the next look waits longer. */
  | { type: 'backoff'; at: string; delayMs: number; rateLimit: RateLimitState }
  /** The last event: the follow stopped before the monthly quota runs out. */
  | ({ type: 'stopped'; at: string } & QuotaStop)
  /** Listening to the emulator's event stream: no look, no call counted. */
  | { type: 'live'; at: string; endpointId: string }
  /** The event stream dropped (`reason`): opened again after `delayMs`. */
  | { type: 'reconnect'; at: string; delayMs: number; reason: string }

/** A field the message names as a string or null; undefined when it does not name it. */
const named = (value: unknown): string | null | undefined =>
  typeof value === 'string' || value === null ? value : undefined

/**
 * A delivery as the attempt just seen, on endpoint `endpointId`. The receiver's
 * outcome and error code are read from the answer's body, unless the message
 * names them itself (the emulator's stream does, for attempts whose body it no
 * longer has).
 */
export const attemptSeen = (endpointId: string, d: Delivery): AttemptSeen => {
  const read = readReceiverAnswer(d.responseBody)
  const answer = {
    outcome: named(d.outcome) === undefined ? read.outcome : named(d.outcome),
    code: named(d.errorCode) === undefined ? read.code : named(d.errorCode),
  }
  return {
    type: 'attempt',
    at: new Date().toISOString(),
    endpointId,
    deliveryId: d.id,
    eventId: d.eventId ?? null,
    eventType: d.eventType ?? null,
    attempt: typeof d.attempts === 'number' ? d.attempts : null,
    status: d.status,
    responseStatus: d.responseStatus,
    outcome: answer.outcome ?? null,
    errorCode: answer.code ?? null,
    durationMs: d.durationMs,
    errorMessage: d.errorMessage ?? null,
    nextAttemptAt:
      d.status === 'retrying' && typeof d.nextAttemptAt === 'string' ? d.nextAttemptAt : null,
  }
}

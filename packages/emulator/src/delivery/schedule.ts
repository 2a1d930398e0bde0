import {
  type DELIVERY_STATUSES,
  type ENDPOINT_STATUSES,
  SERVICE_DISABLES_AFTER,
} from '@affiliate-webhooks/core/internal'

/**
 * The service's delivery rules, as the spec states them ("Delivery rules",
 * "Webhook delivery status", "Webhook endpoint status", "Limits").
 */

const MINUTE = 60_000
const HOUR = 60 * MINUTE

/** Offsets of attempts 2 to 8 after the previous attempt, in ms of service time. */
export const RETRY_SCHEDULE_MS: readonly number[] = [
  MINUTE,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  6 * HOUR,
  12 * HOUR,
  24 * HOUR,
]

/** Attempts per delivery, the first included. */
export const MAX_ATTEMPTS = RETRY_SCHEDULE_MS.length + 1

/** A receiver must answer 2xx within this many ms of real time. */
export const ANSWER_TIMEOUT_MS = 10_000

/** Failed attempts in a row, across all deliveries, that disable the endpoint (core's one copy). */
export const DISABLE_AFTER_FAILURES = SERVICE_DISABLES_AFTER

/** Deliveries go out in batches this often (service time), so times are approximate. */
export const BATCH_INTERVAL_MS = MINUTE

/** The delivery history keeps this many characters of each answer. */
export const RESPONSE_BODY_CHARS = 500

/** Status of one delivery, as the delivery history shows it. */
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number]

/** Status of the endpoint. */
export type EndpointStatus = (typeof ENDPOINT_STATUSES)[number]

/** The rules an engine applies; the spec's unless a test or `simulate` shortens them. */
export interface DeliveryRules {
  /** Offsets of attempts 2..n after the previous one, service ms. */
  retryScheduleMs: readonly number[]
  /** Failed attempts in a row that disable the endpoint; Infinity: never (simulate's `--disable-after off`). */
  disableAfterFailures: number
  /** Deliveries go out in batches this often, service ms; 0 sends each one when due. */
  batchIntervalMs: number
}

/** The spec's rules. */
export const SPEC_RULES: Readonly<DeliveryRules> = {
  retryScheduleMs: RETRY_SCHEDULE_MS,
  disableAfterFailures: DISABLE_AFTER_FAILURES,
  batchIntervalMs: BATCH_INTERVAL_MS,
}

/** The batch that goes out at or before service time `t`: batches fall every `interval` from `origin`. */
export function batchAtOrBefore(t: number, origin: number, interval: number): number {
  if (interval <= 0) return t
  return origin + Math.floor((t - origin) / interval) * interval
}

/** The first batch at or after service time `t`. */
export function batchAtOrAfter(t: number, origin: number, interval: number): number {
  if (interval <= 0 || !Number.isFinite(t)) return t
  return origin + Math.max(0, Math.ceil((t - origin) / interval - 1e-9)) * interval
}

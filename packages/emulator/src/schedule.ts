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

/** Failed attempts in a row, across all deliveries, that disable the endpoint. */
export const DISABLE_AFTER_FAILURES = 20

/** Deliveries go out in batches this often (service time), so times are approximate. */
export const BATCH_INTERVAL_MS = MINUTE

/** The delivery history keeps this many characters of each answer. */
export const RESPONSE_BODY_CHARS = 500

/** Status of one delivery, as the delivery history shows it. */
export type DeliveryStatus = 'pending' | 'retrying' | 'succeeded' | 'failed'

/** Status of the endpoint. */
export type EndpointStatus = 'active' | 'disabled'

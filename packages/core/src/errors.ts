/**
 * Every way a delivery can be refused, with the HTTP status the receiver answers.
 * One table, so no adapter ever decides a status code on its own.
 */
export const ERROR_STATUS = {
  payload_too_large: 413,
  missing_signature: 400,
  malformed_signature: 400,
  signature_mismatch: 401,
  timestamp_outside_tolerance: 401,
  malformed_json: 400,
  invalid_payload: 400,
  event_id_mismatch: 400,
  event_in_progress: 409,
  handler_failed: 500,
  store_unavailable: 503,
  secret_unavailable: 503,
  queue_unavailable: 503,
  raw_body_unavailable: 500,
  method_not_allowed: 405,
  not_found: 404,
  internal_error: 500,
} as const satisfies Record<string, number>

/** Stable, snake_case error codes; branch on these, never on messages. */
export type WebhookErrorCode = keyof typeof ERROR_STATUS

const BRAND = Symbol.for('affiliate-webhooks.WebhookError')

/**
 * The one error class of the library. `code` is stable and `status` comes from
 * {@link ERROR_STATUS}. Messages are safe to send back to the service: they never
 * contain a secret, an expected signature or a stack trace.
 */
export class WebhookError extends Error {
  override readonly name = 'WebhookError'
  readonly code: WebhookErrorCode
  readonly status: number
  readonly [BRAND] = true

  constructor(code: WebhookErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.code = code
    this.status = ERROR_STATUS[code]
  }
}

/**
 * True for a {@link WebhookError}, also one thrown by another copy of this package
 * (two installed versions, or the ESM and CJS builds side by side).
 */
export function isWebhookError(value: unknown): value is WebhookError {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<symbol, unknown>)[BRAND] === true
  )
}

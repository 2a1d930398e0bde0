/** What an error answer tells the service, by its status: see `Outcome` in http/answer.ts. */
export type ErrorOutcome = 'rejected' | 'in_progress' | 'failed'

/** One row of {@link ERROR_CODES}: everything the receiver needs to answer with that code. */
export interface ErrorCodeRow {
  readonly status: number
  readonly outcome: ErrorOutcome
  /** Said when nothing more specific is known (an adapter's refusal, a store or handler failure). */
  readonly message: string
  /**
   * True for requests the service never sends (another method, another path):
   * answered, but not counted in the failure streak, which is about deliveries.
   */
  readonly stray: boolean
}

const row = <S extends number, O extends ErrorOutcome>(
  status: S,
  outcome: O,
  message: string,
  stray = false,
) => ({ status, outcome, message, stray }) as const

/**
 * Every way a delivery can be refused: its HTTP status, the outcome it reports
 * and its default message, in one row per code. No adapter decides a status on
 * its own; 4xx tells the service the delivery is wrong, 409 and 5xx that it
 * should retry.
 */
export const ERROR_CODES = {
  /** The body is over `maxBodyBytes`; adapters stop reading at the limit. */
  payload_too_large: row(413, 'rejected', 'The body is larger than the limit.'),
  /** No `Service-Signature` header, or an empty one. */
  missing_signature: row(400, 'rejected', 'The Service-Signature header is missing.'),
  /** `Service-Signature` is not `t=<integer>,v1=<hex>[,v1=...]`. */
  malformed_signature: row(400, 'rejected', 'The Service-Signature header is malformed.'),
  /** No v1 matches the body under any configured secret: wrong secret, or a changed body. */
  signature_mismatch: row(401, 'rejected', 'No v1 signature matches this body and secret.'),
  /** `t` is further than `tolerance` from this server's clock, either way. */
  timestamp_outside_tolerance: row(
    401,
    'rejected',
    'The signature timestamp is outside the tolerance.',
  ),
  /** Signed, but the body is not JSON. */
  malformed_json: row(400, 'rejected', 'The body is not valid JSON.'),
  /** Signed JSON that is not an event envelope of the spec's shape. */
  invalid_payload: row(400, 'rejected', 'The body is not a valid event.'),
  /** `Service-Event-Id` differs from the signed body's `id`. */
  event_id_mismatch: row(
    400,
    'rejected',
    'Service-Event-Id differs from the id in the signed body.',
  ),
  /** Another attempt of this event, or of its conversion, holds the store's lease. */
  event_in_progress: row(
    409,
    'in_progress',
    'Another attempt of this event is being handled; retry later.',
  ),
  /** The handler threw or rejected; the claim was released for the retry. */
  handler_failed: row(500, 'failed', 'The event handler failed; the delivery will be retried.'),
  /**
   * The event's handled mark became durable through a statement the store did
   * not send (a COMMIT the handler ran on ctx.tx, hidden where the store could
   * not refuse it), so the handler's effects may be partial. The event is held:
   * every delivery of it (and of its conversion) is answered 500 until someone
   * resolves it (run the handler again, or accept it as applied); never 2xx.
   */
  event_held: row(
    500,
    'failed',
    'The event is held: its handled mark was committed by a statement of the handler, not by the store; resolve it, then the retry is answered.',
  ),
  /** The store could not be reached, before or after the handler; nothing is marked done. */
  store_unavailable: row(
    503,
    'failed',
    'The de-duplication store is unreachable; the delivery will be retried.',
  ),
  /** A secret source could not give the secrets to verify with. */
  secret_unavailable: row(
    503,
    'failed',
    'The signing secrets could not be loaded; the delivery will be retried.',
  ),
  /** The `queue` option's queue did not accept the event. */
  queue_unavailable: row(
    503,
    'failed',
    'The queue did not accept the event; the delivery will be retried.',
  ),
  /**
   * Code that ran before the adapter consumed, disturbed or holds the body (a
   * JSON parser ran first): the exact bytes are gone. Known at once from the
   * runtime's own state, never by waiting.
   */
  raw_body_unavailable: row(
    500,
    'failed',
    'The raw request body is not available to verify the signature.',
  ),
  /**
   * The body had not fully arrived `bodyTimeoutMs` after the request started: a
   * stall, a trickle, or a Content-Length larger than what was sent. The
   * client's fault; the connection is closed.
   */
  body_timeout: row(408, 'rejected', 'The body did not arrive in full in time.'),
  /**
   * The client closed the connection before the whole body arrived. Logged and
   * counted like any refusal; there is nobody left to send the answer to.
   */
  body_incomplete: row(400, 'rejected', 'The connection closed before the whole body arrived.'),
  /**
   * The handler was still running `answerWithinMs` after the request started. It
   * goes on, holding the event's lease (copies get 409) and then marking it
   * handled as usual; the service retries, and a retry after that is `duplicate`.
   */
  handler_timeout: row(
    503,
    'failed',
    'The event handler is still running; the delivery will be retried.',
  ),
  /** Not a POST. */
  method_not_allowed: row(405, 'rejected', 'Webhook deliveries are POST requests.', true),
  /** A path the endpoint does not serve. */
  not_found: row(404, 'rejected', 'No webhook endpoint at this path.', true),
  /** Anything else that went wrong inside the receiver. */
  internal_error: row(
    500,
    'failed',
    'The receiver failed unexpectedly; the delivery will be retried.',
  ),
} as const satisfies Record<string, ErrorCodeRow>

/** Stable, snake_case error codes; branch on these, never on messages. */
export type WebhookErrorCode = keyof typeof ERROR_CODES

/** The row of a code, or undefined for one this copy of the package does not know. */
export const rowOf = (code: string): ErrorCodeRow | undefined =>
  (ERROR_CODES as Readonly<Record<string, ErrorCodeRow | undefined>>)[code]

const BRAND = Symbol.for('affiliate-webhooks.WebhookError')

/**
 * The one error class of the library. `code` is stable and `status` comes from
 * {@link ERROR_CODES}. Messages are safe to send back to the service: they never
 * contain a secret, an expected signature or a stack trace.
 */
export class WebhookError extends Error {
  override readonly name = 'WebhookError'
  readonly code: WebhookErrorCode
  readonly status: number
  /**
   * The adapter that answered, for codes whose fix depends on the stack
   * (`raw_body_unavailable`): 'express', 'h3', 'web'... Sent in the answer.
   */
  readonly adapter: string | undefined
  readonly [BRAND] = true

  /** Without a message, the code's default from {@link ERROR_CODES}. */
  constructor(
    code: WebhookErrorCode,
    message?: string,
    options?: { cause?: unknown; adapter?: string | undefined },
  ) {
    super(
      message ?? ERROR_CODES[code].message,
      options !== undefined && 'cause' in options ? { cause: options.cause } : undefined,
    )
    this.code = code
    this.status = ERROR_CODES[code].status
    this.adapter = options?.adapter
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

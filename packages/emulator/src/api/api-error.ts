import type { FieldError } from '@affiliate-webhooks/client'

// One offending field of a validation failure: the client's type, the one copy.
export type { FieldError }

/** The error codes the emulator answers with, and their HTTP status. */
export const ERROR_STATUS = {
  validation_failed: 400,
  malformed_json: 400,
  invalid_api_key: 401,
  insufficient_scope: 403,
  ip_not_allowed: 403,
  channel_not_verified: 403,
  route_not_found: 404,
  program_not_found: 404,
  channel_not_found: 404,
  webhook_not_found: 404,
  delivery_not_found: 404,
  application_not_found: 404,
  key_not_found: 404,
  duplicate_application: 409,
  duplicate_channel: 409,
  webhook_limit_reached: 409,
  delivery_not_replayable: 409,
  application_not_pending: 409,
  key_limit_reached: 409,
  key_revoked: 409,
  payload_too_large: 413,
  url_not_allowed: 422,
  rate_limited: 429,
  quota_exceeded: 429,
  internal_error: 500,
} as const

/** A code of {@link ERROR_STATUS}. */
export type ApiErrorCode = keyof typeof ERROR_STATUS

/**
 * A refused request: the status, `error.code` and extra fields the service would
 * answer with. A validation failure carries the array of {@link FieldError}s.
 */
export class ApiError extends Error {
  override readonly name = 'ApiError'
  readonly status: number
  readonly code: ApiErrorCode
  readonly extra: Readonly<Record<string, unknown>>
  readonly fields: readonly FieldError[] | undefined
  /** Response headers the failure adds (Retry-After). */
  readonly headers: Readonly<Record<string, string>>

  constructor(
    code: ApiErrorCode,
    message: string,
    options: {
      extra?: Record<string, unknown>
      fields?: readonly FieldError[]
      headers?: Record<string, string>
    } = {},
  ) {
    super(message)
    this.code = code
    this.status = ERROR_STATUS[code]
    this.extra = options.extra ?? {}
    this.fields = options.fields
    this.headers = options.headers ?? {}
  }

  /** The envelope's `error`: an object with `code`, or the array of fields. */
  body(): unknown {
    return this.fields ?? { code: this.code, ...this.extra }
  }
}

/** True for an {@link ApiError}. */
export const isApiError = (value: unknown): value is ApiError => value instanceof ApiError

/** A 400 with one entry per offending field. */
export const validationError = (fields: readonly FieldError[]): ApiError =>
  new ApiError('validation_failed', 'The request has invalid fields.', { fields })

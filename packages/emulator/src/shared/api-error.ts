import type { FieldError } from '@affiliate-webhooks/client'
import { SERVICE_ERROR_STATUS } from '@affiliate-webhooks/core/internal'

// One offending field of a validation failure: the client's type, the one copy.
export type { FieldError }

/**
 * The error codes the emulator answers with, and their HTTP status: the
 * service's (`SERVICE_ERROR_STATUS`, the spec's list, one copy in core) and the
 * emulator's own, for its applications and keys.
 */
export const API_ERROR_STATUS = {
  ...SERVICE_ERROR_STATUS,
  application_not_found: 404,
  key_not_found: 404,
  application_not_pending: 409,
  key_limit_reached: 409,
  key_revoked: 409,
} as const

/** A code of {@link API_ERROR_STATUS}. */
export type ApiErrorCode = keyof typeof API_ERROR_STATUS

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
    this.status = API_ERROR_STATUS[code]
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

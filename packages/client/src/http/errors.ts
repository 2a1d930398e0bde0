import type { SERVICE_ERROR_STATUS } from '@affiliate-webhooks/core/internal'

/** Error codes the service documents; branch on these, never on messages. */
export type ServiceErrorCode =
  /** The codes of the spec's error table (core's one copy, with their statuses). */
  | keyof typeof SERVICE_ERROR_STATUS
  /** A 400 whose `error` is the per-field array: see {@link ServiceError.fields}. */
  | 'validation_failed'
  /** No answer at all: connection refused or dropped, DNS, TLS, or the client's timeout. */
  | 'network_error'
  /** An answer that is not the service's JSON envelope (an HTML error page, a proxy). */
  | 'invalid_response'
  /** A code this version does not know yet. */
  | (string & {})

/** One entry of a validation failure: which field, `required` or `invalid_format`. */
export interface FieldError {
  field: string
  code: 'required' | 'invalid_format' | (string & {})
  message: string
}

/** The fields a {@link ServiceError} may carry besides status and code. */
export interface ServiceErrorDetails {
  /** `insufficient_scope`: the scope the call needs. */
  required?: string
  /** `insufficient_scope`: the scopes the key has. */
  granted?: string[]
  /** `ip_not_allowed`: the address the service saw. */
  ip?: string
  /** `invalid_api_key` after the key was rolled: when. */
  rotatedAt?: string
  /** 429: seconds to wait, from `Retry-After`. */
  retryAfter?: number
  /** `validation_failed`: one entry per offending field. */
  fields?: FieldError[]
  /** Every other field of the service's `error` object, kept as sent. */
  extra?: Record<string, unknown>
}

const BRAND = Symbol.for('affiliate-webhooks.ServiceError')

/**
 * The one error class of the client: the service refused a call (`status` and
 * its `code`), answered something that is not the API (`invalid_response`), or
 * did not answer (`network_error`, status 0). Messages never contain the API key.
 */
export class ServiceError extends Error implements ServiceErrorDetails {
  override readonly name = 'ServiceError'
  readonly status: number
  readonly code: ServiceErrorCode
  readonly required?: string
  readonly granted?: string[]
  readonly ip?: string
  readonly rotatedAt?: string
  readonly retryAfter?: number
  readonly fields?: FieldError[]
  readonly extra?: Record<string, unknown>
  readonly [BRAND] = true

  constructor(
    status: number,
    code: ServiceErrorCode,
    message: string,
    details: ServiceErrorDetails = {},
    options?: { cause?: unknown },
  ) {
    super(message, options)
    this.status = status
    this.code = code
    for (const key of [
      'required',
      'granted',
      'ip',
      'rotatedAt',
      'retryAfter',
      'fields',
      'extra',
    ] as const) {
      if (details[key] !== undefined) Object.assign(this, { [key]: details[key] })
    }
  }
}

/** True for a {@link ServiceError}, also one from another copy of this package. */
export function isServiceError(value: unknown): value is ServiceError {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<symbol, unknown>)[BRAND] === true
  )
}

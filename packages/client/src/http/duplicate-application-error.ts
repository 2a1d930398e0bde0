import type { ApplicationStatus } from '../types.js'
import { ServiceError, type ServiceErrorDetails } from './errors.js'

const BRAND = Symbol.for('affiliate-webhooks.DuplicateApplicationError')

/**
 * 409 `duplicate_application`: the channel already applied to the program, in
 * any state. Carries that application's `applicationId` and `status`; a
 * rejection cannot be re-applied through the API.
 */
export class DuplicateApplicationError extends ServiceError {
  /** The existing application's id. */
  readonly applicationId: number
  /** The existing application's state (`status` stays the HTTP status, 409, as on every ServiceError). */
  readonly applicationStatus: ApplicationStatus
  /** Both, as the service's `error` carries them. */
  readonly application: { applicationId: number; status: ApplicationStatus }
  readonly [BRAND] = true

  constructor(status: number, message: string, details: ServiceErrorDetails = {}) {
    super(status, 'duplicate_application', message, details)
    // ServiceError's name is a literal type; the stack still says which class it is.
    Object.defineProperty(this, 'name', { value: 'DuplicateApplicationError' })
    this.applicationId = Number(details.extra?.applicationId)
    this.applicationStatus = String(details.extra?.status ?? '') as ApplicationStatus
    this.application = { applicationId: this.applicationId, status: this.applicationStatus }
  }
}

/** True for a {@link DuplicateApplicationError}, also one from another copy of this package. */
export function isDuplicateApplicationError(value: unknown): value is DuplicateApplicationError {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<symbol, unknown>)[BRAND] === true
  )
}

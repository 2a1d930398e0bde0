/**
 * The lists the Publisher Affiliate API specification enumerates, one copy each
 * (`spec/publisher-affiliate-api.md`): event types, the statuses of conversions,
 * deliveries, endpoints, applications and programs, and the service's error codes
 * with their HTTP status. The client and the emulator import them from here.
 */

/** The event types an endpoint subscribes to: the spec's conversion events. */
export const CONVERSION_EVENT_TYPES = ['conversion.created', 'conversion.updated'] as const
/** Every event type of the spec: the conversion events and `webhook.test` (sent by the test route only). */
export const EVENT_TYPES = [...CONVERSION_EVENT_TYPES, 'webhook.test'] as const

/** Statuses of a conversion ("Conversion status"). */
export const CONVERSION_STATUSES = [
  'pending',
  'approved',
  'available',
  'ready_for_payout',
  'rejected',
] as const

/** Statuses of a webhook delivery ("Webhook delivery status"). */
export const DELIVERY_STATUSES = ['pending', 'retrying', 'succeeded', 'failed'] as const

/** Statuses of a webhook endpoint ("Webhook endpoint status"). */
export const ENDPOINT_STATUSES = ['active', 'disabled'] as const

/** States of a program application ("Program application status"). */
export const APPLICATION_STATUSES = [
  'pending',
  'approved',
  'rejected',
  'paused',
  'suspended',
  'expired',
] as const

/** A program's payout types ("Program": `payoutType`; a filter takes only these). */
export const PAYOUT_TYPES = ['cps', 'cpc'] as const

/** A program's approval types ("Program": `approvalType`). */
export const APPROVAL_TYPES = ['auto', 'manual'] as const

/** A program's status for the caller: an application's state, or `not_applied`. */
export const PROGRAM_STATUSES = ['not_applied', ...APPLICATION_STATUSES] as const

/**
 * The service API's error codes and the HTTP status each comes with ("Error
 * codes"; `validation_failed` is the envelope's array of field errors). Not the
 * receiver's codes: those are `ERROR_CODES`.
 */
export const SERVICE_ERROR_STATUS = {
  validation_failed: 400,
  malformed_json: 400,
  invalid_api_key: 401,
  insufficient_scope: 403,
  ip_not_allowed: 403,
  program_not_approved: 403,
  channel_not_verified: 403,
  route_not_found: 404,
  program_not_found: 404,
  channel_not_found: 404,
  tracking_link_not_found: 404,
  withdrawal_not_found: 404,
  webhook_not_found: 404,
  delivery_not_found: 404,
  duplicate_application: 409,
  duplicate_channel: 409,
  verification_not_required: 409,
  webhook_limit_reached: 409,
  delivery_not_replayable: 409,
  payload_too_large: 413,
  destination_not_allowed: 422,
  verification_failed: 422,
  url_not_allowed: 422,
  rate_limited: 429,
  quota_exceeded: 429,
  internal_error: 500,
} as const

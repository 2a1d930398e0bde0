import type {
  APPLICATION_STATUSES,
  APPROVAL_TYPES,
  DELIVERY_STATUSES,
  ENDPOINT_STATUSES,
  PAYOUT_TYPES,
} from '@affiliate-webhooks/core/internal'

/**
 * The service's resources as the spec describes them. Every object keeps the
 * fields the service sends beyond these (typed `unknown`): nothing is dropped.
 */

/** Event types an endpoint can subscribe to; a type the service adds later stays a string. */
export type SubscribableEventType = 'conversion.created' | 'conversion.updated' | (string & {})

/** `active` or `disabled`. */
export type EndpointStatus = (typeof ENDPOINT_STATUSES)[number] | (string & {})

/** A registered webhook endpoint. */
export interface WebhookEndpoint {
  id: string
  url: string
  events: SubscribableEventType[]
  description: string | null
  status: EndpointStatus
  /** Failed attempts in a row across all of the endpoint's deliveries. */
  consecutiveFailures: number
  disabledAt: string | null
  /** Last successful delivery. */
  lastDeliveryAt: string | null
  [field: string]: unknown
}

/** What `create` and `rotateSecret` return: the endpoint with its secret, shown only then. */
export interface WebhookEndpointWithSecret extends WebhookEndpoint {
  /** `whsec_...`: keep it; the service never shows it again. */
  secret: string
}

/** `pending`, `retrying`, `succeeded`, `failed`. */
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number]

/** One delivery of one event to one endpoint, with its latest attempt. */
export interface Delivery {
  id: string
  status: DeliveryStatus | (string & {})
  /** The HTTP status the receiver answered, or null when nothing answered. */
  responseStatus: number | null
  /** First 500 characters of the receiver's answer. */
  responseBody: string | null
  durationMs: number | null
  /** Why there was no response at all (refused, timed out). */
  errorMessage?: string | null
  eventId?: string
  eventType?: string
  attempts?: number
  createdAt?: string
  [field: string]: unknown
}

/** `POST /v1/webhooks`. */
export interface CreateWebhookInput {
  /** Public https URL on port 443, at most 800 characters. */
  url: string
  events: SubscribableEventType[]
  /** At most 255 characters. */
  description?: string
}

/** `PATCH /v1/webhooks/{id}`: any subset. */
export interface UpdateWebhookInput {
  url?: string
  events?: SubscribableEventType[]
  /** null clears it. */
  description?: string | null
  /** `disabled` stops deliveries; `active` turns them on and resets the failure count. */
  status?: 'active' | 'disabled'
}

/** `POST /v1/webhooks/{id}/test`. */
export interface TestEventResult {
  eventId: string
  deliveryId: string
  [field: string]: unknown
}

/** `POST .../replay`: accepted (202), or found already replayed by an earlier try. */
export interface ReplayResult {
  deliveryId: string
  /**
   * `accepted`: this call started the new set of attempts. `already_replaying`: a
   * retry of this call met 409, so the try whose answer was lost had started it.
   */
  outcome: 'accepted' | 'already_replaying'
  data?: unknown
}

/** `GET /v1/me`: the calling key. Only `callerIp` is named by the spec. */
export interface KeyInfo {
  callerIp?: string
  scopes?: string[]
  [field: string]: unknown
}

/** The rate-limit state the last answer reported. */
export interface RateLimitState {
  limit: number
  remaining: number
  /** Unix seconds when the window clears. */
  reset: number
}

/** The monthly quota as an answer's `X-Quota-Used` and `X-Quota-Limit` reported it. */
export interface QuotaState {
  /** `X-Quota-Used`: the month's calls before the answered one. */
  usedBefore: number
  /** Calls used this month, the answered one included. */
  used: number
  /** `X-Quota-Limit`: calls a month (250,000 by the spec). */
  limit: number
  /** Calls left this month after the answered one. */
  remaining: number
}

/** `cps` (share of sale) or `cpc` (per click); a type the service adds later stays a string. */
export type PayoutType = (typeof PAYOUT_TYPES)[number] | (string & {})
/** `percent` (revenue share) or `fixed` (flat amount). */
export type PayoutUnit = 'percent' | 'fixed' | (string & {})
/** `auto` (approved the instant you apply) or `manual` (reviewed by the team). */
export type ApprovalType = (typeof APPROVAL_TYPES)[number] | (string & {})
/** The state of an application. */
export type ApplicationStatus = (typeof APPLICATION_STATUSES)[number] | (string & {})
/** The caller's application state for a program: an application's, or `not_applied`. */
export type ProgramStatus = 'not_applied' | ApplicationStatus

/** A program as `programs.list()` yields it (the retrieve-only fields are absent). */
export interface ProgramSummary {
  id: number
  merchantName: string | null
  /** The merchant's site without `www.`; deep links stay on it or a subdomain. */
  merchantDomain: string | null
  /** The network's category as a lowercase slug; the set is open. */
  category: string | null
  payoutType: PayoutType
  /** The publisher's share of the highest tier, a two-decimal string ("7.00"); read with payoutUnit. */
  payout: string | null
  payoutUnit: PayoutUnit | null
  /** ISO 4217. */
  currency: string | null
  /** Attribution window in days. */
  cookieDays: number | null
  approvalType: ApprovalType | null
  /** The caller's application state: for the channelId passed, else the best across its channels. */
  status: ProgramStatus
  supportsDeepLinks: boolean
  [field: string]: unknown
}

/** A program as `programs.get()` returns it. */
export interface Program extends ProgramSummary {
  description: string | null
  /** ISO 3166-1 alpha-2 codes. */
  regions: string[]
  logoUrl: string | null
}

/** An application of a channel to a program. */
export interface Application {
  applicationId: number
  status: ApplicationStatus
  appliedAt: string
  /** When it left `pending`; for auto programs, appliedAt. */
  decidedAt: string | null
  rejectionReason: null
  [field: string]: unknown
}

/** A row of `applications.list()`. */
export interface ApplicationListEntry extends Application {
  merchantName: string | null
}

/** `POST /v1/programs/applications`. */
export interface CreateApplicationInput {
  programId: number
  /** An approved channel of the caller that completed verification. */
  channelId: number
  /** Up to 500 characters; accepted but not stored. */
  note?: string
}

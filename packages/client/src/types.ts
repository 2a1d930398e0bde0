/**
 * The service's resources as the spec describes them. Every object keeps the
 * fields the service sends beyond these (typed `unknown`): nothing is dropped.
 */

/** Event types an endpoint can subscribe to; a type the service adds later stays a string. */
export type SubscribableEventType = 'conversion.created' | 'conversion.updated' | (string & {})

/** `active` or `disabled`. */
export type EndpointStatus = 'active' | 'disabled' | (string & {})

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
export type DeliveryStatus = 'pending' | 'retrying' | 'succeeded' | 'failed'

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

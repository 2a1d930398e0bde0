export { type Client, type ClientOptions, createClient } from './client.js'
export { checkEndpointHealth, type HealthFinding } from './endpoint-health.js'
export {
  type FieldError,
  isServiceError,
  ServiceError,
  type ServiceErrorCode,
  type ServiceErrorDetails,
} from './errors.js'
export {
  type RecoveryReport,
  type ReplaySummary,
  recoverEndpoint,
  replayAll,
  streakStart,
} from './recovery.js'
export type { RetryOptions } from './transport.js'
export type {
  CreateWebhookInput,
  Delivery,
  DeliveryStatus,
  EndpointStatus,
  KeyInfo,
  RateLimitState,
  ReplayResult,
  SubscribableEventType,
  TestEventResult,
  UpdateWebhookInput,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
} from './types.js'
export type { CallOptions, DeliveriesOptions, WebhooksResource } from './webhooks.js'

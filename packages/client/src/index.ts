export { type Client, type ClientOptions, createClient } from './client.js'
export {
  type FieldError,
  isServiceError,
  ServiceError,
  type ServiceErrorCode,
  type ServiceErrorDetails,
} from './errors.js'
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

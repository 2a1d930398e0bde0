// The public surface (see README "Public surface"): `createClient`, the `api.*`
// resources, the errors it throws and the objects it returns. What only the CLI,
// the emulator and the tests share (follow, recovery, pacing, the emulator's
// control calls) is on `@affiliate-webhooks/client/internal`, outside semver.
export { type Client, type ClientOptions, createClient } from './client.js'
export {
  DuplicateApplicationError,
  isDuplicateApplicationError,
} from './http/duplicate-application-error.js'
export {
  type FieldError,
  isServiceError,
  ServiceError,
  type ServiceErrorCode,
  type ServiceErrorDetails,
} from './http/errors.js'
export type { RetryOptions } from './http/transport.js'
export type { ApplicationFilters, ApplicationsResource } from './resources/applications.js'
export type { ProgramFilters, ProgramsResource } from './resources/programs.js'
export type { CallOptions, DeliveriesOptions, WebhooksResource } from './resources/webhooks.js'
export type {
  Application,
  ApplicationListEntry,
  ApplicationStatus,
  ApprovalType,
  CreateApplicationInput,
  CreateWebhookInput,
  Delivery,
  DeliveryStatus,
  EndpointStatus,
  KeyInfo,
  PayoutType,
  PayoutUnit,
  Program,
  ProgramStatus,
  ProgramSummary,
  QuotaState,
  RateLimitState,
  ReplayResult,
  SubscribableEventType,
  TestEventResult,
  UpdateWebhookInput,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
} from './types.js'

export type { ApplicationFilters, ApplicationsResource } from './applications.js'
export {
  API_KEY_ENV,
  API_URL_ENV,
  type Client,
  type ClientOptions,
  createClient,
} from './client.js'
export {
  DuplicateApplicationError,
  isDuplicateApplicationError,
} from './duplicate-application-error.js'
export {
  type ConversionInput,
  type EmitResult,
  EmulatorControls,
} from './emulator-controls.js'
export { checkEndpointHealth, type HealthFinding } from './endpoint-health.js'
export {
  type FieldError,
  isServiceError,
  ServiceError,
  type ServiceErrorCode,
  type ServiceErrorDetails,
} from './errors.js'
export {
  type FollowEvent,
  type FollowOptions,
  followDeliveries,
  followDelivery,
  waitForAttempt,
} from './follow.js'
export {
  formatApplications,
  formatApplied,
  formatProgram,
  formatPrograms,
  payoutText,
} from './program-text.js'
export type { ProgramFilters, ProgramsResource } from './programs.js'
export {
  type RecoveryReport,
  type ReplaySummary,
  recoverEndpoint,
  replayAll,
  streakStart,
} from './recovery.js'
export {
  answerOf,
  formatDeliveries,
  formatEndpoint,
  formatEndpoints,
  formatFollowEvent,
  formatHealthFindings,
  formatRecovery,
  formatReplaySummary,
  formatRows,
  formatTable,
} from './text.js'
export type { RetryOptions } from './transport.js'
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
  RateLimitState,
  ReplayResult,
  SubscribableEventType,
  TestEventResult,
  UpdateWebhookInput,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
} from './types.js'
export {
  APPLICATION_STATUSES,
  APPROVAL_TYPES,
  DELIVERY_STATUSES,
  PAYOUT_TYPES,
  PROGRAM_STATUSES,
} from './types.js'
export type { CallOptions, DeliveriesOptions, WebhooksResource } from './webhooks.js'

export type { ApplicationFilters, ApplicationsResource } from './applications.js'
export {
  COMMAND_COSTS,
  type CommandCost,
  type CostedCommand,
  type CostItem,
} from './call-cost.js'
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
  type ClockAdvance,
  type ConversionInput,
  type EmitResult,
  type EmulatorClock,
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
  type AttemptSeen,
  attemptSeen,
  type FollowEvent,
  type FollowNotice,
  type FollowOptions,
  followDeliveries,
  followDelivery,
  waitForAttempt,
} from './follow.js'
export {
  FOLLOW_CALLS_PER_POLL,
  type FollowPlan,
  LOW_RATE_SHARE,
  MAX_BACKOFF_FACTOR,
  MIN_POLL_MS,
  type NextPoll,
  nextPoll,
  POLL_JITTER,
  planFollow,
  QUOTA_RESERVE_SHARE,
  type QuotaStop,
  quotaStop,
} from './follow-pacing.js'
export { PAGE_SIZE } from './page-walk.js'
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
  type StillQueued,
  stillQueued,
  streakStart,
} from './recovery.js'
export {
  DAY_MS,
  SERVICE_PACE,
  type ServicePace,
  SPEC_BATCH_INTERVAL_MS,
  SPEC_MONTHLY_QUOTA,
  SPEC_RATE_LIMIT,
  servicePace,
} from './service-pace.js'
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
  QuotaState,
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

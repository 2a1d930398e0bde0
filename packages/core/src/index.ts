export {
  ERROR_CODES,
  ERROR_STATUS,
  type ErrorCodeRow,
  type ErrorOutcome,
  isWebhookError,
  WebhookError,
  type WebhookErrorCode,
} from './errors.js'
export {
  type AnyWebhookEvent,
  CONVERSION_EVENT_TYPES,
  type Conversion,
  type ConversionCreatedEvent,
  type ConversionEvent,
  type ConversionEventData,
  type ConversionStatus,
  type ConversionUpdatedEvent,
  EVENT_TYPES,
  type EventType,
  isConversionEvent,
  isKnownEvent,
  type UnknownWebhookEvent,
  type WebhookEvent,
  type WebhookTestEvent,
} from './events/event-types.js'
export {
  type AdapterCore,
  type AdapterIO,
  type AdapterOptions,
  BoundedBody,
  createAdapter,
  keptBody,
  tooLarge,
} from './http/adapter.js'
export { readReceiverAnswer } from './http/answer.js'
export { getHeader, type HeadersInput } from './http/headers.js'
export {
  BODY_IDLE_MS,
  RAW_BODY_FIXES,
  type RawBodyAdapter,
  type RawBodyLoss,
  rawBodyFixOf,
  rawBodyUnavailable,
} from './http/raw-body-fixes.js'
export {
  type AnyHandler,
  createReceiver,
  type EventHandlers,
  type HandlerContext,
  handlerTable,
  type Outcome,
  type ReceiveResult,
  type Receiver,
  type ReceiverOptions,
} from './receiver/create-receiver.js'
export {
  type QueuedDelivery,
  type QueuedJobData,
  type QueueHandoff,
  readQueuedJob,
  toQueuedJobData,
} from './receiver/queue-handoff.js'
export {
  type DiagnoseOptions,
  type Diagnosis,
  type DiagnosisCode,
  diagnoseSignature,
  formatDiagnosis,
} from './signature/diagnose.js'
export { DEFAULT_SECRET_REFRESH_MS, type SecretSource } from './signature/secret-source.js'
export {
  formatSignatureHeader,
  MAX_SIGNATURE_HEADER_LENGTH,
  parseSignatureHeader,
  type SignatureHeader,
} from './signature/signature-header.js'
export {
  ATTEMPT_HEADER,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_TOLERANCE_SECONDS,
  type DeliveryInput,
  EVENT_ID_HEADER,
  SIGNATURE_HEADER,
  type VerifyOptions,
  verifyEvent,
} from './signature/verify.js'
export {
  type BeginInput,
  type BeginResult,
  type Claim,
  type EventStore,
  type FailureStreak,
  type MaybePromise,
  NO_STREAK,
  type PeekInput,
  type PeekResult,
  resolveStoreTimings,
  STORE_DEFAULTS,
  STREAK_CODES_KEPT,
  type StoreTimings,
} from './store/event-store.js'
export { type MemoryStoreOptions, memoryStore } from './store/memory-store.js'
export {
  atMostEvery,
  checkAcquireTimeout,
  checkoutWithin,
  type DatabaseEventStore,
  gatedStreak,
  type PooledStoreOptions,
  PRUNE_BATCH,
  PRUNE_EVERY_MS,
  PRUNE_ROUND_BATCHES,
  PRUNE_ROUND_BUDGET_MS,
  pruneRound,
  STORE_STATEMENT_TIMEOUT_MS,
  STREAK_RESET_EVERY_MS,
} from './store/store-kit.js'
export { BURST_WINDOW_MS, type Logger, resolveLogger } from './telemetry/delivery-log.js'
export { FAILURE_STREAK_WARNINGS, SERVICE_DISABLES_AFTER } from './telemetry/failure-streak.js'
export { TELEMETRY_NAMES } from './telemetry/otel-telemetry.js'

/**
 * `@affiliate-webhooks/core/internal`: shared by the sibling packages of this
 * repository only (adapters, stores, the queue, the client, the emulator, the
 * CLI): the adapter kit, the store kit, the queue hand-off's job data, the
 * signature header codec, the service API's spec lists. Not covered by semver:
 * any name here may change in any release. Applications import
 * `@affiliate-webhooks/core`.
 *
 * @packageDocumentation
 */

export {
  APPLICATION_STATUSES,
  APPROVAL_TYPES,
  DELIVERY_STATUSES,
  ENDPOINT_STATUSES,
  PAYOUT_TYPES,
  PROGRAM_STATUSES,
  SERVICE_ERROR_STATUS,
  type ServiceErrorCode,
} from './events/spec-lists.js'
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
export { getHeader } from './http/headers.js'
export {
  BODY_IDLE_MS,
  RAW_BODY_FIXES,
  type RawBodyAdapter,
  type RawBodyLoss,
  rawBodyFixOf,
  rawBodyUnavailable,
} from './http/raw-body-fixes.js'
export { type AnyHandler, handlerTable } from './receiver/handlers.js'
export {
  type QueuedJobData,
  readQueuedJob,
  toQueuedJobData,
} from './receiver/queue-handoff.js'
export { DEFAULT_SECRET_REFRESH_MS } from './signature/secret-source.js'
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
  EVENT_ID_HEADER,
  SIGNATURE_HEADER,
} from './signature/verify.js'
export {
  NO_STREAK,
  resolveStoreTimings,
  STORE_DEFAULTS,
  STREAK_CODES_KEPT,
  type StoreTimings,
} from './store/event-store.js'
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
export { BURST_WINDOW_MS, resolveLogger } from './telemetry/delivery-log.js'
export { FAILURE_STREAK_WARNINGS, SERVICE_DISABLES_AFTER } from './telemetry/failure-streak.js'

/**
 * `@affiliate-webhooks/core/internal`: shared by the sibling packages of this
 * repository only (adapters, stores, the queue, the client, the emulator, the
 * CLI): the adapter kit, the store kit, the queue hand-off's job data, the
 * signature header parser, the service API's spec lists. Not covered by semver:
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
} from './events/spec-lists.js'
export {
  type AdapterOptions,
  BoundedBody,
  createAdapter,
  keptBody,
  tooLarge,
} from './http/adapter.js'
export { readReceiverAnswer } from './http/answer.js'

export {
  BODY_TIMEOUT_MS,
  type BodyProgress,
  type BodyReadIO,
  bodyTimeout,
  readBodyWithin,
} from './http/body-deadline.js'
export {
  type RawBodyAdapter,
  rawBodyFixOf,
  rawBodyUnavailable,
} from './http/raw-body-fixes.js'
export { readWebBody } from './http/web-body.js'
export { type AnyHandler, handlerTable } from './receiver/handlers.js'
export { readQueuedJob, toQueuedJobData } from './receiver/queue-handoff.js'

export { parseSignatureHeader } from './signature/signature-header.js'
export { DEFAULT_MAX_BODY_BYTES, DEFAULT_TOLERANCE_SECONDS } from './signature/verify.js'
export {
  NO_STREAK,
  resolveStoreTimings,
  STREAK_CODES_KEPT,
  type StoreTimings,
} from './store/event-store.js'
export { checkResolution, heldNext, notHeld } from './store/held-events.js'
export {
  atMostEvery,
  CLOSE_TIMEOUT_MS,
  type CloseOutcome,
  checkAcquireTimeout,
  checkoutWithin,
  checkSqlIdentifier,
  closeOnce,
  closer,
  type DatabaseEventStore,
  gatedStreak,
  handlerLeftAborted,
  type PooledStoreOptions,
  PRUNE_BATCH,
  PRUNE_EVERY_MS,
  pruneRound,
  STORE_STATEMENT_TIMEOUT_MS,
  STREAK_RESET_EVERY_MS,
  takeOpenClaim,
} from './store/store-kit.js'
export {
  refusedStatement,
  type SqlDialect,
  transactionControl,
  transactionGone,
  transactionOver,
} from './store/transaction-control.js'
export { resolveLogger } from './telemetry/delivery-log.js'
export { SERVICE_DISABLES_AFTER } from './telemetry/failure-streak.js'

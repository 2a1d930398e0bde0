/**
 * `@affiliate-webhooks/core`: verify, parse, de-duplicate, order and dispatch
 * Publisher Affiliate API webhooks, framework-neutral. Every name here is public
 * and covered by semver; the README's "Public surface" says who uses each.
 * What only sibling packages share is in `@affiliate-webhooks/core/internal`.
 */

export {
  ERROR_CODES,
  type ErrorCodeRow,
  type ErrorOutcome,
  isWebhookError,
  WebhookError,
  type WebhookErrorCode,
} from './errors.js'
export {
  type AnyWebhookEvent,
  type Conversion,
  type ConversionCreatedEvent,
  type ConversionEvent,
  type ConversionEventData,
  type ConversionStatus,
  type ConversionUpdatedEvent,
  type EventEnvelope,
  type EventType,
  isConversionEvent,
  isKnownEvent,
  type UnknownWebhookEvent,
  type WebhookEvent,
  type WebhookTestEvent,
} from './events/event-types.js'
export { CONVERSION_EVENT_TYPES, CONVERSION_STATUSES, EVENT_TYPES } from './events/spec-lists.js'
export type { Outcome, ReceiveResult } from './http/answer.js'
export type { HeadersInput } from './http/headers.js'
export { createReceiver } from './receiver/create-receiver.js'
export type { QueuedDelivery, QueueHandoff } from './receiver/queue-handoff.js'
export type {
  EventHandler,
  EventHandlers,
  HandlerContext,
  Receiver,
  ReceiverOptions,
} from './receiver/receiver-types.js'
export {
  type DiagnoseOptions,
  type Diagnosis,
  type DiagnosisCode,
  diagnoseSignature,
} from './signature/diagnose.js'
export type { SecretSource } from './signature/secret-source.js'
export { type SignPayloadOptions, signPayload } from './signature/sign.js'
export { type DeliveryInput, type VerifyOptions, verifyEvent } from './signature/verify.js'
export type {
  BeginInput,
  BeginResult,
  Claim,
  CloseOptions,
  EventStore,
  FailureStreak,
  MaybePromise,
  PeekInput,
  PeekResult,
  StoreTimings,
} from './store/event-store.js'
export type {
  HeldEvent,
  HeldResolution,
  HeldResolved,
  HoldingStore,
} from './store/held-events.js'
export { type MemoryStoreOptions, memoryStore } from './store/memory-store.js'
export type { Logger } from './telemetry/delivery-log.js'
export { TELEMETRY_NAMES } from './telemetry/otel-telemetry.js'

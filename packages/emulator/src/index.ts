/**
 * `@affiliate-webhooks/emulator`: the service's webhook side, in memory. Start it
 * with {@link createEmulator}; drive its delivery engine in-process through
 * `emulator.engine`; read the delivery rules it follows from the spec constants.
 * What only the CLI and sibling packages use is on `@affiliate-webhooks/emulator/internal`,
 * outside semver (see the README's "Public surface").
 */

export { MONTHLY_QUOTA, RATE_LIMIT } from './account/rate-limit.js'
export type { AttemptLogEntry, DeliveryRecord } from './delivery/delivery-record.js'
export {
  type EmitOutcome,
  type EndpointRecord,
  Engine,
  type EngineEvent,
  type EngineOptions,
  type EngineSnapshot,
} from './delivery/engine.js'
export {
  ANSWER_TIMEOUT_MS,
  BATCH_INTERVAL_MS,
  type DeliveryRules,
  type DeliveryStatus,
  DISABLE_AFTER_FAILURES,
  type EndpointStatus,
  MAX_ATTEMPTS,
  RESPONSE_BODY_CHARS,
  RETRY_SCHEDULE_MS,
  SPEC_RULES,
} from './delivery/schedule.js'
export { USER_AGENT } from './delivery/signing.js'
export { createEmulator, type Emulator, type EmulatorOptions } from './server/create-emulator.js'
export { API_ERROR_STATUS, ApiError, type ApiErrorCode, isApiError } from './shared/api-error.js'
export { type Clock, type ClockOptions, createClock } from './shared/clock.js'

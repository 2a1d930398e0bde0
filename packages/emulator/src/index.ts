export type { AccountState } from './account-state.js'
export {
  API_ERROR_STATUS,
  ApiError,
  type ApiErrorCode,
  type FieldError,
  isApiError,
} from './api-error.js'
export {
  APPLICATION_STATUSES,
  type Application,
  type ApplicationStatus,
  PROGRAM_STATUSES,
  type ProgramStatus,
} from './applications.js'
export {
  type Agents,
  type AttemptRequest,
  type AttemptResult,
  createAgents,
  sendAttempt,
  truncateAnswer,
} from './attempt.js'
export {
  bodyOf,
  type CapturedDelivery,
  CaptureFileError,
  captureOf,
  readCapture,
  resendHeaders,
  writeCapture,
} from './capture-file.js'
export {
  APPROVAL_TYPES,
  categorySlug,
  PAYOUT_TYPES,
  PAYOUT_UNITS,
  type Program,
  type ProgramInput,
  PUBLISHER_SHARE_PERCENT,
  publisherPayout,
} from './catalogue.js'
export { readCatalogueFile } from './catalogue-file.js'
export type { Channel } from './channels.js'
export { characterCount } from './characters.js'
export { type Clock, type ClockOptions, createClock } from './clock.js'
export { createEmulator, type Emulator, type EmulatorOptions } from './create-emulator.js'
export { type CatalogueSeed, DEFAULT_CATALOGUE } from './default-catalogue.js'
export { type AttemptContext, type AttemptDetail, attemptDelivery } from './delivery-attempt.js'
export {
  type AttemptLogEntry,
  type DeliveryProgress,
  type DeliveryRecord,
  type FailedBecause,
  failDelivery,
  isQueued,
  newDeliveryRecord,
  pendingDelivery,
  settleAttempt,
  startReplay,
} from './delivery-record.js'
export {
  emulatorBanner,
  formatAttemptLine,
  formatEndpointLine,
  formatRelayed,
  terminalLog,
} from './emulator-text.js'
export {
  activeEndpoint,
  disableEndpoint,
  type EndpointState,
  enableEndpoint,
  recordFailure,
  recordSuccess,
} from './endpoint-state.js'
export {
  createEngine,
  type EmitResult,
  Engine,
  type EngineEvent,
  type EngineOptions,
  type EngineSnapshot,
  type WebhookEndpoint,
} from './engine.js'
export { errorHint, type HintTarget } from './error-hints.js'
export { MAX_ALLOWLIST_ENTRIES } from './ip-allowlist.js'
export {
  KEY_EXPIRY_DAYS,
  type KeyRecord,
  type KeyStatus,
  MAX_ACTIVE_KEYS,
  type NewKeyInput,
} from './key-registry.js'
export { API_KEY_PATTERN, type ApiKey, parseApiKey, SCOPES, type Scope } from './keys.js'
export {
  LIFECYCLE,
  type PlanLifecyclesOptions,
  type PlannedEvent,
  planLifecycles,
} from './lifecycles.js'
export { MAX_NOTE_LENGTH } from './program-query.js'
export { Pump, type PumpOptions, type Queued } from './pump.js'
export { randomSeed, seededRandom } from './random.js'
export { MONTHLY_QUOTA, RATE_LIMIT } from './rate-limit.js'
export { createRelay, type RelayedDelivery, type RelayOptions, startRelay } from './relay.js'
export { findWebhookRoute, isWrongRoute, routeHint } from './route-probe.js'
export { type EndpointStatusChange, MAX_ENDPOINTS } from './routes.js'
export {
  type ExpectedConversion,
  runSimulation,
  runSimulation as simulate,
  SIMULATION_DEFAULTS,
  type SimulationOptions,
  type SimulationProgress,
  type SimulationReport,
} from './run-simulation.js'
export {
  ANSWER_TIMEOUT_MS,
  BATCH_INTERVAL_MS,
  batchAtOrAfter,
  batchAtOrBefore,
  type DeliveryRules,
  type DeliveryStatus,
  DISABLE_AFTER_FAILURES,
  type EndpointStatus,
  MAX_ATTEMPTS,
  RESPONSE_BODY_CHARS,
  RETRY_SCHEDULE_MS,
  SPEC_RULES,
} from './schedule.js'
export {
  afterFailedAttempt,
  attemptOutcome,
  randomConversionId,
  SAMPLE_EVENT_TYPES,
  type SampleEventOptions,
  sampleEventBody,
} from './send-one.js'
export {
  type DeliveryHeadersOptions,
  deliveryHeaders,
  describeEvent,
  USER_AGENT,
} from './signing.js'
export {
  type AttemptRecord,
  createSimulation,
  type Delivery,
  type Simulation,
  type SimulationEngineOptions,
  type SimulatorStats,
} from './simulation.js'
export { simulationSummary } from './simulation-summary.js'
export {
  formatCounts,
  formatDuration,
  formatSimulationProgress,
  formatSimulationSummary,
} from './simulation-text.js'
export { CONVERSION_STATUSES, MAX_DESCRIPTION_LENGTH } from './validation.js'
export {
  checkWebhookUrl,
  isLoopbackHost,
  isPrivateHost,
  MAX_URL_LENGTH,
  privateHostReason,
} from './webhook-url.js'

/**
 * `@affiliate-webhooks/emulator/internal`: the emulator's parts that only the CLI,
 * the examples and this repository's tests use (the simulator, the relay and
 * capture files, the delivery engine's pieces, probes, account rules). Shared by
 * sibling packages only; NOT covered by semver: any name here may change or go
 * in any release. Users import `@affiliate-webhooks/emulator`.
 */
export type { AccountState } from './account/account-state.js'
export {
  API_KEY_PATTERN,
  type ApiKey,
  parseApiKey,
  SCOPES,
  type Scope,
} from './account/api-keys.js'
export {
  APPLICATION_STATUSES,
  type Application,
  type ApplicationStatus,
  PROGRAM_STATUSES,
  type ProgramStatus,
} from './account/applications.js'
export {
  APPROVAL_TYPES,
  categorySlug,
  PAYOUT_TYPES,
  PAYOUT_UNITS,
  type Program,
  type ProgramInput,
  PUBLISHER_SHARE_PERCENT,
  publisherPayout,
} from './account/catalogue.js'
export { readCatalogueFile } from './account/catalogue-file.js'
export type { Channel } from './account/channels.js'
export { type CatalogueSeed, DEFAULT_CATALOGUE } from './account/default-catalogue.js'
export { MAX_ALLOWLIST_ENTRIES } from './account/ip-allowlist.js'
export {
  KEY_EXPIRY_DAYS,
  type KeyRecord,
  type KeyStatus,
  MAX_ACTIVE_KEYS,
  type NewKeyInput,
} from './account/key-registry.js'
export type { FieldError } from './api/api-error.js'
export { characterCount } from './api/characters.js'
export { MAX_NOTE_LENGTH } from './api/program-query.js'
export { type EndpointStatusChange, MAX_ENDPOINTS } from './api/routes/webhooks.js'
export { type ConversionRecord, MAX_DESCRIPTION_LENGTH } from './api/validation.js'
export {
  type AttemptContext,
  type AttemptDetail,
  attemptDelivery,
} from './delivery/attempt-delivery.js'
export {
  type DeliveryProgress,
  type FailedBecause,
  failDelivery,
  isQueued,
  newDeliveryRecord,
  pendingDelivery,
  settleAttempt,
  startReplay,
} from './delivery/delivery-record.js'
export {
  activeEndpoint,
  disableEndpoint,
  type EndpointState,
  enableEndpoint,
  recordFailure,
  recordSuccess,
} from './delivery/endpoint-state.js'
export { createEngine } from './delivery/engine.js'
export {
  type Agents,
  type AttemptRequest,
  type AttemptResult,
  createAgents,
  sendAttempt,
  truncateAnswer,
} from './delivery/http-request.js'
export { Pump, type PumpOptions, type Queued } from './delivery/pump.js'
export { findWebhookRoute, isWrongRoute } from './delivery/route-probe.js'
export { batchAtOrAfter, batchAtOrBefore } from './delivery/schedule.js'
export {
  type DeliveryHeadersOptions,
  deliveryHeaders,
  describeEvent,
} from './delivery/signing.js'
export {
  checkWebhookUrl,
  isLoopbackHost,
  isPrivateHost,
  MAX_URL_LENGTH,
  privateHostReason,
} from './delivery/url-rules/webhook-url.js'
export {
  bodyOf,
  type CapturedDelivery,
  CaptureFileError,
  captureOf,
  readCapture,
  resendHeaders,
  writeCapture,
} from './relay/capture-file.js'
export { createRelay, type RelayedDelivery, type RelayOptions, startRelay } from './relay/relay.js'
export {
  LIFECYCLE,
  type PlanLifecyclesOptions,
  type PlannedEvent,
  planLifecycles,
} from './simulate/lifecycles.js'
export { randomSeed, seededRandom } from './simulate/random.js'
export {
  type ExpectedConversion,
  runSimulation,
  SIMULATION_DEFAULTS,
  type SimulationOptions,
  type SimulationProgress,
  type SimulationReport,
} from './simulate/run-simulation.js'
export {
  randomConversionId,
  SAMPLE_EVENT_TYPES,
  type SampleEventOptions,
  sampleEventBody,
} from './simulate/sample-event.js'
export {
  type AttemptRecord,
  createSimulation,
  type SimulatedDelivery,
  type Simulation,
  type SimulationEngineOptions,
  type SimulatorStats,
} from './simulate/simulation-driver.js'
export { simulationSummary } from './simulate/simulation-summary.js'

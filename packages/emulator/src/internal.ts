/**
 * `@affiliate-webhooks/emulator/internal`: the emulator's parts that only the CLI,
 * the examples and this repository's tests use (the simulator, the relay and
 * capture files, the delivery engine's pieces, probes, account rules). Shared by
 * sibling packages only; NOT covered by semver: any name here may change or go
 * in any release. Users import `@affiliate-webhooks/emulator`.
 */

export { MAX_NOTE_LENGTH } from './api/program-query.js'
export { type AttemptResult, sendAttempt } from './delivery/http-request.js'
export { findWebhookRoute, isWrongRoute } from './delivery/route-probe.js'
export { deliveryHeaders, describeEvent } from './delivery/signing.js'
export {
  bodyOf,
  type CapturedDelivery,
  CaptureFileError,
  captureOf,
  readCapture,
  resendHeaders,
  writeCapture,
} from './relay/capture-file.js'
export { type RelayedDelivery, startRelay } from './relay/relay.js'
export { characterCount } from './shared/characters.js'
export { planLifecycles } from './simulate/lifecycles.js'
export { seededRandom } from './simulate/random.js'
export {
  runSimulation,
  SIMULATION_DEFAULTS,
  type SimulationProgress,
  type SimulationReport,
} from './simulate/run-simulation.js'
export {
  randomConversionId,
  SAMPLE_EVENT_TYPES,
  type SampleEventOptions,
  sampleEventBody,
} from './simulate/sample-event.js'
export { type AttemptRecord, createSimulation } from './simulate/simulation-driver.js'
export { simulationSummary } from './simulate/simulation-summary.js'

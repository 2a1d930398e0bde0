// The delivery rules live in @affiliate-webhooks/emulator, the one engine both
// `simulate` and `emulator` drive; re-exported so this package's API stays whole.
export {
  ANSWER_TIMEOUT_MS,
  type AttemptRequest,
  type AttemptResult,
  BATCH_INTERVAL_MS,
  type DeliveryHeadersOptions,
  type DeliveryStatus,
  DISABLE_AFTER_FAILURES,
  deliveryHeaders,
  type EndpointStatus,
  isSimulatorError,
  MAX_ATTEMPTS,
  RESPONSE_BODY_CHARS,
  RETRY_SCHEDULE_MS,
  SimulatorError,
  type SimulatorErrorCode,
  sendAttempt,
} from '@affiliate-webhooks/emulator'
export {
  type DiagnoseOptions,
  type Diagnosis,
  type DiagnosisCode,
  diagnoseSignature,
} from './diagnose.js'
export {
  LIFECYCLE,
  type PlanLifecyclesOptions,
  type PlannedEvent,
  planLifecycles,
} from './lifecycles.js'
export { seededRandom } from './random.js'
export { formatDuration, formatProgress, formatSummary } from './report.js'
export {
  type ExpectedConversion,
  runSimulation,
  type SimulationOptions,
  type SimulationProgress,
  type SimulationReport,
} from './run-simulation.js'
export {
  type AttemptRecord,
  answerOutcome,
  createDeliverySimulator,
  type Delivery,
  type DeliverySimulator,
  type DeliverySimulatorOptions,
  type EmitOptions,
  type EndpointState,
  type EnqueueOptions,
  type SimulatorStats,
} from './simulator.js'

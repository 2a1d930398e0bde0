export { type DeliveryHeadersOptions, deliveryHeaders } from './delivery-headers.js'
export {
  ANSWER_TIMEOUT_MS,
  BATCH_INTERVAL_MS,
  type DeliveryStatus,
  DISABLE_AFTER_FAILURES,
  type EndpointStatus,
  MAX_ATTEMPTS,
  RESPONSE_BODY_CHARS,
  RETRY_SCHEDULE_MS,
} from './delivery-rules.js'
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
  type AttemptRequest,
  type AttemptResult,
  sendAttempt,
} from './send-attempt.js'
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
export { isSimulatorError, SimulatorError, type SimulatorErrorCode } from './simulator-error.js'

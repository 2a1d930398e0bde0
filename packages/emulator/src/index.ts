export {
  type Agents,
  type AttemptRequest,
  type AttemptResult,
  createAgents,
  sendAttempt,
  truncateAnswer,
} from './attempt.js'
export { isSimulatorError, SimulatorError, type SimulatorErrorCode } from './delivery-error.js'
export {
  type DeliveryProgress,
  type FailedBecause,
  failDelivery,
  isQueued,
  pendingDelivery,
  settleAttempt,
  startReplay,
} from './delivery-record.js'
export {
  activeEndpoint,
  disableEndpoint,
  type EndpointState,
  enableEndpoint,
  recordFailure,
  recordSuccess,
} from './endpoint-state.js'
export {
  ANSWER_TIMEOUT_MS,
  BATCH_INTERVAL_MS,
  type DeliveryStatus,
  DISABLE_AFTER_FAILURES,
  type EndpointStatus,
  MAX_ATTEMPTS,
  RESPONSE_BODY_CHARS,
  RETRY_SCHEDULE_MS,
} from './schedule.js'
export {
  type DeliveryHeadersOptions,
  deliveryHeaders,
  describeEvent,
  USER_AGENT,
} from './signing.js'

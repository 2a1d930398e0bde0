export {
  type FailedJob,
  failedJobs,
  JOB_STATES,
  type QueueStats,
  queueStats,
  retryFailed,
} from './admin.js'
export type { QueueConnection } from './connection.js'
export { type BullmqHandoff, type BullmqHandoffOptions, bullmqHandoff } from './handoff.js'
export {
  type AffiliateWorker,
  type CreateWorkerOptions,
  createWorker,
  recoveryBoundMs,
  type WorkerContext,
  type WorkerOutcome,
} from './worker.js'

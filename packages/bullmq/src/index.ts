export {
  type FailedJob,
  failedJobs,
  formatFailedJobs,
  formatQueueStats,
  JOB_STATES,
  openQueueForAdmin,
  type QueueStats,
  queueStats,
  retryFailed,
} from './admin.js'
export {
  clientFor,
  jobIdFor,
  type QueueConnection,
} from './connection.js'
export { type BullmqHandoff, type BullmqHandoffOptions, bullmqHandoff } from './handoff.js'
export {
  type AffiliateWorker,
  type CreateWorkerOptions,
  createWorker,
  recoveryBoundMs,
  type WorkerContext,
  type WorkerOutcome,
} from './worker.js'

/**
 * `@affiliate-webhooks/client/internal`: what the CLI, the emulator and the
 * repository's tests share with the client and no user calls: the environment
 * variable names, the emulator's control calls, the long-running workflows
 * (follow, replay, recovery) and the pacing they run under,
 * the spec's lists. Shared by sibling packages only; not covered by semver: any
 * release may change or remove a name here. Users import `@affiliate-webhooks/client`.
 *
 * @packageDocumentation
 */
export { API_KEY_ENV, API_URL_ENV } from './client.js'
export type {
  ConversionInput,
  EmitResult,
  LoggedAttempt,
} from './resources/emulator-controls.js'
export { COMMAND_COSTS, type CostedCommand, type CostItem } from './workflows/call-cost.js'
export {
  type AttemptSeen,
  attemptSeen,
  type FollowEvent,
  type FollowNotice,
  followDeliveries,
  followDelivery,
} from './workflows/follow.js'
export {
  followDeliveryAttempts,
  loggedAttemptSeen,
  newLoggedAttempts,
} from './workflows/follow-attempts.js'
export { followLive } from './workflows/follow-live.js'
export { type FollowPlan, MIN_POLL_MS, planFollow } from './workflows/follow-pacing.js'
export {
  type Acknowledgement,
  acknowledgementOf,
  type LeftDelivery,
  type RecoveryReport,
  type ReplaySummary,
  recoverEndpoint,
  replayAll,
  type StillQueued,
} from './workflows/recovery.js'
export { SERVICE_PACE, servicePace } from './workflows/service-pace.js'

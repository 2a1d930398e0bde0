/**
 * `@affiliate-webhooks/postgres/internal`: the store's layout and statements,
 * for the sibling packages that run them through another driver
 * (`@affiliate-webhooks/prisma`), so that each SQL text has one copy. Not
 * covered by semver: any release may change or remove a name here. Users
 * import `@affiliate-webhooks/postgres`.
 *
 * @packageDocumentation
 */
export { CANCEL_GRACE_MS } from './bounded.js'
export {
  isAborted,
  isBarrierRefused,
  isEscapeRefused,
  isLeaseEnd,
  isLockNotAvailable,
  leaseEnded,
  notReplicated,
  unreachable,
} from './errors.js'
export {
  REPLICATION_FACTS_SQL,
  type ReplicationFacts,
  type ReplicationRisk,
  replicationCheck,
  replicationRisk,
  replicationWarning,
  type StandbyRow,
} from './replication.js'
export { type SchemaNames, schemaNames } from './schema.js'
export {
  ensureSchema,
  type RunSql,
  readServerFacts,
  type ServerFacts,
  type SetupDriver,
} from './setup.js'
export {
  backendXid,
  cancelSyncWaitSql,
  claimCallSql,
  durableDuplicateStatementSql,
  heldSql,
  type PeekRow,
  peekSql,
  peekVerdict,
  pruneSql,
  SERVER_IDLE_MARGIN_MS,
  staleCommitStatementSql,
  streakOf,
  streakResetSql,
  streakSql,
  TRANSACTION_ID,
} from './statements.js'

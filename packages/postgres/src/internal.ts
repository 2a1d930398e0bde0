/**
 * `@affiliate-webhooks/postgres/internal`: the store's layout and statements,
 * for the sibling packages that run them through another driver
 * (`@affiliate-webhooks/prisma`), so that each SQL text has one copy. Not
 * covered by semver: any release may change or remove a name here. Users
 * import `@affiliate-webhooks/postgres`.
 *
 * @packageDocumentation
 */
export {
  isAborted,
  isEscapeRefused,
  isLeaseEnd,
  isLockNotAvailable,
  leaseEnded,
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
  claimCallSql,
  heldSql,
  type PeekRow,
  peekSql,
  peekVerdict,
  pruneSql,
  SERVER_IDLE_MARGIN_MS,
  streakResetSql,
  streakSql,
  TRANSACTION_ID,
} from './statements.js'

/**
 * `@affiliate-webhooks/mysql/internal`: the store's layout, procedures and
 * statements, for the sibling packages that run them through another driver
 * (`@affiliate-webhooks/prisma`), so that each SQL text has one copy. Not
 * covered by semver: any release may change or remove a name here. Users
 * import `@affiliate-webhooks/mysql`.
 *
 * @packageDocumentation
 */
export { isConnectionLost } from './errors.js'
export {
  heldEventsOn,
  heldMessage,
  resolveHeldOn,
} from './held.js'
export {
  acknowledged,
  barrierSql,
  canAcknowledge,
  notReplicated,
  readReplicationFacts,
  replicationWarning,
  type SemiSyncReader,
  type SemiSyncStatus,
  semiSyncOffWarning,
  semiSyncStatusOf,
  semiSyncStatusSql,
  statusRefusedWarning,
} from './replication.js'
export { type SchemaNames, schemaNames } from './schema.js'
export { ensureSchema, type MysqlRun } from './setup.js'
export {
  eventKey,
  type PeekRow,
  PRUNE_RESTORE_SQL,
  PRUNE_WAIT_SQL,
  PRUNED,
  peekSql,
  peekVerdict,
  pruneDeleteSql,
  pruneKeysSql,
} from './statements.js'

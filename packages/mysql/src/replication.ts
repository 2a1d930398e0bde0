/**
 * Whether a commit the store makes survives a failover of a MySQL or MariaDB
 * primary (issue 59). With semi-synchronous replication on, a commit waits for
 * a replica's acknowledgement; but the primary falls back to asynchronous when
 * none comes within `rpl_semi_sync_master_timeout`, and then its commits
 * return on the primary alone. So the store reads the primary's semi-sync
 * status around each commit that makes a mark (and around a write that stands
 * behind a `duplicate` or `stale` answer): a commit counts as replicated only
 * when semi-sync was on, with a replica connected, before it, and still on
 * after it with no commit counted unacknowledged in between. Both servers
 * spell the names `master` (MariaDB, MySQL's old plugin) or `source` (MySQL
 * 8.0.26's new plugin).
 */
import type { MysqlRun } from './setup.js'

/** The facts the store reads once at start. */
export interface ReplicationFacts {
  /** `log_bin`: a server without a binary log has no replica. */
  binaryLog: boolean
  /** `rpl_semi_sync_{master,source}_enabled`; undefined when the server has no semi-sync at all. */
  semiSyncEnabled: boolean | undefined
  /** How the names are spelt on this server. */
  spelling: 'master' | 'source'
  /** Replicas connected now that acknowledge (`Rpl_semi_sync_..._clients`). */
  semiSyncClients: number
  /** Replicas connected now (SHOW REPLICA HOSTS); undefined when the role may not list them. */
  replicas: number | undefined
}

/**
 * `standalone`: no binary log, or none streams from it. `semi-sync`: commits
 * wait for a replica, and the store checks each. `lossy`: replicas stream and
 * commits do not wait for them. `no-ack`: semi-sync is on and no replica
 * acknowledges (each delivery is answered 503 until one does). `unknown`: the
 * role may not list the replicas.
 */
export type ReplicationVerdict = 'standalone' | 'semi-sync' | 'lossy' | 'no-ack' | 'unknown'

export function replicationVerdict(facts: ReplicationFacts): ReplicationVerdict {
  if (facts.semiSyncEnabled === true) return facts.semiSyncClients > 0 ? 'semi-sync' : 'no-ack'
  if (!facts.binaryLog) return 'standalone'
  if (facts.replicas === undefined) return 'unknown'
  return facts.replicas > 0 ? 'lossy' : 'standalone'
}

/** The settings that keep the promise, named in each warning. */
function settings(facts: ReplicationFacts, boundMs: number): string {
  const s = facts.spelling
  const replica = s === 'master' ? 'slave' : 'replica'
  return `rpl_semi_sync_${s}_enabled = ON on the primary, rpl_semi_sync_${replica}_enabled = ON on each replica it may fail over to, rpl_semi_sync_${s}_wait_point = AFTER_SYNC, and rpl_semi_sync_${s}_timeout above the store's ${boundMs} ms bound`
}

/** The one line said at start, or undefined when nothing is at risk. */
export function replicationWarning(
  facts: ReplicationFacts,
  caller: string,
  boundMs: number,
): string | undefined {
  const verdict = replicationVerdict(facts)
  const keep = settings(facts, boundMs)
  if (verdict === 'lossy') {
    const semi =
      facts.semiSyncEnabled === undefined
        ? 'semi-synchronous replication is not installed'
        : `rpl_semi_sync_${facts.spelling}_enabled is OFF`
    return `${caller}: the database is a primary whose ${facts.replicas} replica(s) are asynchronous (${semi}): a commit returns before any replica has it, so a failover can lose conversions the receiver already acknowledged, the handler's effects and the store's mark together, and the service will not send them again. Set ${keep}.`
  }
  if (verdict === 'no-ack') {
    return `${caller}: semi-synchronous replication is on, but no replica acknowledges (Rpl_semi_sync_${facts.spelling}_clients = 0): every delivery is answered 503 until one does, since a mark only the primary has would not survive a failover. Check the replicas: ${keep}.`
  }
  if (verdict === 'unknown') {
    return `${caller}: could not tell whether the database has replicas (the role may not list them: SHOW REPLICA HOSTS needs REPLICATION MASTER ADMIN on MariaDB, REPLICATION SLAVE on MySQL), and semi-synchronous replication is not on: if a replica takes over, conversions acknowledged before may be lost. Either grant that privilege, or keep the promise with ${keep}.`
  }
  return undefined
}

/** What the store reads around a commit. */
export interface SemiSyncStatus {
  /** `rpl_semi_sync_..._enabled` on the server the connection reaches now (after a failover, maybe another). */
  enabled: boolean
  on: boolean
  clients: number
  /** Commits the primary counted as not acknowledged since it started. */
  notAcknowledged: number
  /**
   * Times the primary turned semi-sync off (`_no_times`): a fallback to
   * asynchronous, and also `SET GLOBAL ..._enabled = OFF`, which counts no
   * commit unacknowledged: off and on again between two reads shows only here.
   */
  turnedOff: number
}

/** How the store reads the status on this server: its spelling, and where status and settings live. */
export interface SemiSyncReader {
  spelling: 'master' | 'source'
  /** `information_schema` (MariaDB) or `performance_schema` (MySQL): their GLOBAL_STATUS and GLOBAL_VARIABLES. */
  schema: string
}

/**
 * One statement, one round trip, no privilege needed: the setting and the
 * three status values, a row each. (MariaDB reads a `@@GLOBAL` variable as 0
 * in a query on its GLOBAL_STATUS table: so both come from tables.)
 */
export function semiSyncStatusSql({ spelling, schema }: SemiSyncReader): string {
  const status = ['status', 'clients', 'no_tx', 'no_times'].map(
    (name) => `'Rpl_semi_sync_${spelling}_${name}'`,
  )
  return `SELECT VARIABLE_NAME AS name, VARIABLE_VALUE AS value FROM ${schema}.GLOBAL_STATUS WHERE VARIABLE_NAME IN (${status.join(', ')}) UNION ALL SELECT VARIABLE_NAME, VARIABLE_VALUE FROM ${schema}.GLOBAL_VARIABLES WHERE VARIABLE_NAME = 'rpl_semi_sync_${spelling}_enabled'`
}

/** The status rows, read. */
export function semiSyncStatusOf(rows: { name: string; value: unknown }[]): SemiSyncStatus {
  const value = (suffix: string) =>
    rows.find((row) => row.name.toLowerCase().endsWith(suffix))?.value
  const flag = (v: unknown) => v === 'ON' || v === '1' || v === 1
  return {
    enabled: flag(value('_enabled')),
    on: flag(value('_status')),
    clients: Number(value('_clients') ?? 0),
    notAcknowledged: Number(value('_no_tx') ?? 0),
    turnedOff: Number(value('_no_times') ?? 0),
  }
}

/** Whether a replica can acknowledge the next commit: semi-sync on, one connected. */
export const canAcknowledge = (before: SemiSyncStatus): boolean =>
  before.enabled && before.on && before.clients > 0

/**
 * Whether the commit made between `before` and `after` was acknowledged: on
 * (and enabled) before and after, with a replica connected before, no commit
 * counted unacknowledged in between and semi-sync never turned off in between
 * (another delivery's counts too: a false 503 while replication falters,
 * never a false 2xx).
 */
export const acknowledged = (before: SemiSyncStatus, after: SemiSyncStatus): boolean =>
  canAcknowledge(before) &&
  after.enabled &&
  after.on &&
  after.notAcknowledged === before.notAcknowledged &&
  after.turnedOff === before.turnedOff

const VARIABLES_SQL =
  "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('log_bin', 'rpl_semi_sync_master_enabled', 'rpl_semi_sync_source_enabled')"

/** SHOW REPLICA HOSTS, as each server spells it; the row count, or undefined when refused. */
async function replicaCount(run: MysqlRun): Promise<number | undefined> {
  for (const sql of ['SHOW REPLICA HOSTS', 'SHOW REPLICAS', 'SHOW SLAVE HOSTS']) {
    try {
      return (await run(sql)).length
    } catch (error) {
      // 1064: not this server's spelling; anything else (1227: no privilege) ends the search.
      const { errno, code } = error as { errno?: number; code?: unknown }
      if (errno !== 1064 && code !== '1064') return undefined
    }
  }
  return undefined
}

/** The status reader for this server, from its version string. */
export function semiSyncReader(version: string, spelling: 'master' | 'source'): SemiSyncReader {
  return {
    spelling,
    schema: /mariadb/i.test(version) ? 'information_schema' : 'performance_schema',
  }
}

/** Reads the facts (four or five statements). Throws what the server throws. */
export async function readReplicationFacts(
  run: MysqlRun,
): Promise<ReplicationFacts & { reader: SemiSyncReader }> {
  const rows = await run<{ Variable_name: string; Value: string }>(VARIABLES_SQL)
  const variable = (name: string) =>
    rows.find((row) => row.Variable_name.toLowerCase() === name)?.Value
  const spelling = variable('rpl_semi_sync_source_enabled') === undefined ? 'master' : 'source'
  const enabled = variable(`rpl_semi_sync_${spelling}_enabled`)
  const [version] = await run<{ v: string }>('SELECT VERSION() AS v')
  const reader = semiSyncReader(String(version?.v ?? ''), spelling)
  const status =
    enabled === undefined
      ? undefined
      : semiSyncStatusOf(await run<{ name: string; value: unknown }>(semiSyncStatusSql(reader)))
  const binaryLog = variable('log_bin') === 'ON' || variable('log_bin') === '1'
  return {
    binaryLog,
    semiSyncEnabled: enabled === undefined ? undefined : enabled === 'ON' || enabled === '1',
    spelling,
    semiSyncClients: status?.clients ?? 0,
    replicas: binaryLog ? await replicaCount(run) : 0,
    reader,
  }
}

/** Semi-sync was on at start and is off on the server the store reaches now: commits are not checked while it is. */
export function semiSyncOffWarning(caller: string, spelling: string): string {
  return `${caller}: semi-synchronous replication was on when the store started and is off on the server it reaches now (rpl_semi_sync_${spelling}_enabled = OFF: turned off, or another server after a failover): commits are not checked for a replica's acknowledgement while it is off, so a failover can lose acknowledged conversions.`
}

/** The code of {@link notReplicated}'s error. */
const NOT_REPLICATED = 'not_replicated'

/**
 * The delivery is not acknowledged because no replica acknowledged what its
 * answer rests on: thrown by the store, answered 503, and the service retries.
 * `committed`: the mark stands on the primary (the retry's answer waits for a
 * replica too); otherwise nothing was committed and the retry runs the handler.
 */
export function notReplicated(caller: string, spelling: string, committed: boolean): Error {
  const what = committed
    ? 'the commit returned without a replica acknowledging it (the primary fell back to asynchronous replication, or the wait passed the bound): the mark stands on the primary only, so the delivery is not acknowledged; its retry is answered once a replica has it'
    : 'no replica acknowledges commits now (semi-synchronous replication is off, or no replica is connected): the store rolled the delivery back rather than commit a mark only the primary would have'
  return Object.assign(
    new Error(
      `${caller}: ${what}. Check the replicas and Rpl_semi_sync_${spelling}_status on the primary.`,
    ),
    { code: NOT_REPLICATED },
  )
}

/** A table row the store rewrites to stand behind a duplicate's or a stale answer: its commit waits for a replica. */
export const barrierSql = (streakTable: string) =>
  `INSERT INTO ${streakTable} (name, failures, codes, expires_at) VALUES ('replicated', 0, '', 0) ON DUPLICATE KEY UPDATE failures = 1 - failures`

/** The role may not read the status: the semi-sync check falls back, said once. */
export function statusRefusedWarning(caller: string, cause: unknown): string {
  const reason = cause instanceof Error ? cause.message : String(cause)
  return `${caller}: could not read the primary's semi-synchronous replication status (${reason}): commits are no longer checked for a replica's acknowledgement, so a failover can lose acknowledged conversions. Let the store's role run SHOW GLOBAL STATUS and read @@GLOBAL.rpl_semi_sync_master_enabled.`
}

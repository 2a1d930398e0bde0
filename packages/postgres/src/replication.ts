import type { Logger } from '@affiliate-webhooks/core'
import type { RunSql } from './setup.js'

/** One row of `pg_stat_replication`, as the store's role sees it (nulls without pg_monitor). */
export interface StandbyRow {
  /** The standby's `application_name` (its `cluster_name`, or `walreceiver`). */
  name: string | null
  /** `async`, `potential`, `sync` or `quorum`; null when the role may not see it. */
  state: string | null
}

/** What the store reads of the server once at start. */
export interface ReplicationFacts {
  /** `pg_is_in_recovery()`: a standby itself (the store's writes would be refused there). */
  inRecovery: boolean
  /** `current_setting('synchronous_commit')` in the store's session. */
  synchronousCommit: string
  /** `current_setting('synchronous_standby_names')`. */
  synchronousStandbyNames: string
  standbys: StandbyRow[]
}

/**
 * Whether a commit the store makes can be lost at a failover: `lossy` when the
 * server is a primary with at least one standby streaming and its commits wait
 * for none (no standby `sync` or `quorum`, or `synchronous_commit` is `off` or
 * `local`). `standalone`: no standby streams. `unknown`: the role cannot see the
 * standbys' state (not superuser, not pg_monitor), or the server is a standby.
 */
export type ReplicationRisk =
  | {
      verdict: 'lossy'
      standbys: StandbyRow[]
      synchronousCommit: string
      synchronousStandbyNames: string
    }
  | { verdict: 'synchronous' | 'standalone' | 'unknown' }

const WAITS_FOR_STANDBY = new Set(['sync', 'quorum'])
const COMMIT_WAITS_NOT = new Set(['off', 'local'])

/** The decision, from the facts alone. */
export function replicationRisk(facts: ReplicationFacts): ReplicationRisk {
  if (facts.inRecovery) return { verdict: 'unknown' }
  if (facts.standbys.length === 0) return { verdict: 'standalone' }
  if (facts.standbys.some((standby) => standby.state === null)) return { verdict: 'unknown' }
  const waited = facts.standbys.some((standby) => WAITS_FOR_STANDBY.has(standby.state as string))
  if (waited && !COMMIT_WAITS_NOT.has(facts.synchronousCommit)) return { verdict: 'synchronous' }
  const { standbys, synchronousCommit, synchronousStandbyNames } = facts
  return { verdict: 'lossy', standbys, synchronousCommit, synchronousStandbyNames }
}

/** The one line said for a `lossy` server; `caller` is the store's name (`postgresStore`, `prismaStore`). */
export function replicationWarning(
  risk: Extract<ReplicationRisk, { verdict: 'lossy' }>,
  caller: string,
): string {
  const { standbys, synchronousCommit, synchronousStandbyNames } = risk
  const shown = standbys.slice(0, 5).map((s) => `${s.name ?? '?'} ${s.state}`)
  if (standbys.length > shown.length) shown.push(`${standbys.length - shown.length} more`)
  // A synchronous standby is there, but this session's commits do not wait for it.
  const what = standbys.some((s) => WAITS_FOR_STANDBY.has(s.state as string))
    ? `whose commits do not wait for its standbys`
    : `whose standbys are asynchronous`
  const example =
    synchronousStandbyNames === ''
      ? ` (for example 'ANY 1 (${standbys[0]?.name})')`
      : ' to name a standby that streams'
  return `${caller}: the database is a primary ${what} (standbys: ${shown.join(', ')}; synchronous_standby_names = '${synchronousStandbyNames}'; synchronous_commit = ${synchronousCommit}): a commit returns before any standby has it, so a failover can lose conversions the receiver already acknowledged, the handler's effects and the store's mark together, and the service will not send them again. On the primary, set synchronous_standby_names${example} and synchronous_commit = on or remote_apply.`
}

/** One statement for every fact, whatever the driver (the standbys as JSON text). */
export const REPLICATION_FACTS_SQL = `SELECT pg_is_in_recovery() AS in_recovery,
       current_setting('synchronous_commit') AS synchronous_commit,
       current_setting('synchronous_standby_names') AS synchronous_standby_names,
       (SELECT COALESCE(json_agg(json_build_object('name', application_name, 'state', sync_state)), '[]')::text
          FROM pg_stat_replication) AS standbys`

/**
 * Reads the facts with `run` and returns the warning to say, if any. Never
 * throws: a server that does not answer, or refuses the statement, says nothing.
 */
export async function replicationCheck(run: RunSql, caller: string): Promise<string | undefined> {
  try {
    const rows = await run<{
      in_recovery: boolean
      synchronous_commit: string
      synchronous_standby_names: string
      standbys: string
    }>(REPLICATION_FACTS_SQL)
    const row = rows[0]
    if (row === undefined) return undefined
    const risk = replicationRisk({
      inRecovery: row.in_recovery,
      synchronousCommit: row.synchronous_commit,
      synchronousStandbyNames: row.synchronous_standby_names,
      standbys: JSON.parse(row.standbys) as StandbyRow[],
    })
    return risk.verdict === 'lossy' ? replicationWarning(risk, caller) : undefined
  } catch {
    return undefined
  }
}

/**
 * The step `ready()` runs after the schema: the first time only, the check,
 * and its line (if any) to `logger.warn`. With no logger, no statement at all.
 */
export function replicationOnce(
  run: RunSql,
  logger: Logger | undefined,
  caller = 'postgresStore',
): () => Promise<void> {
  let checked = false
  return async () => {
    if (checked || logger === undefined) return
    checked = true
    const line = await replicationCheck(run, caller)
    if (line !== undefined) logger.warn(line)
  }
}

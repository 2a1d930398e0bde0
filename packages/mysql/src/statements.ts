/**
 * The store's statements outside its procedures, `?` placeholders, each value
 * its own placeholder: as mysql2 and Prisma's MariaDB adapter both send them.
 * One copy of each text.
 */
import { createHash } from 'node:crypto'
import { NOW_MS, type SchemaNames } from './schema.js'

/** Event ids longer than the key column are keyed by their SHA-256. */
const KEY_BYTES = 255

/** The events table's key: the id itself, or its hash when longer than the column. */
export function eventKey(eventId: string): string {
  if (Buffer.byteLength(eventId) <= KEY_BYTES) return eventId
  return `evt_sha256_${createHash('sha256').update(eventId).digest('hex')}`
}

/**
 * peek: whether the event is done, its conversion's committed watermark and
 * whether that is the event's own. Parameters: event key, event key, conversion.
 */
export const peekSql = (n: SchemaNames) =>
  `SELECT
    EXISTS (SELECT 1 FROM ${n.events} WHERE event_id = ? AND expires_at > ${NOW_MS} AND claim_token IS NULL) AS done,
    MAX(watermark) AS watermark, MAX(event_id = ?) AS own, MAX(claim_token IS NOT NULL) AS held
    FROM ${n.conversions} WHERE conversion_id = ? AND expires_at > ${NOW_MS}`

/** The peek's row, however the driver returns numbers. */
export interface PeekRow {
  done: number | bigint | string
  watermark: number | bigint | string | null
  own: number | bigint | string | null
  /** The conversion's row carries a committed marker: its events are held, never settled. */
  held?: number | bigint | string | null
}

/** The peek's verdict from its row. */
export function peekVerdict(
  row: PeekRow | undefined,
  order: number,
): 'duplicate' | 'stale' | 'unsettled' {
  if (row === undefined || Number(row.held ?? 0) === 1) return 'unsettled'
  if (Number(row.done) === 1 || Number(row.own) === 1) return 'duplicate'
  if (row.watermark !== null && Number(row.watermark) >= order) return 'stale'
  return 'unsettled'
}

/** The key column of each table pruned. */
export const PRUNED = (names: SchemaNames) =>
  [
    { table: names.events, key: 'event_id' },
    { table: names.conversions, key: 'conversion_id' },
  ] as const

/** A prune round's session bound: a row a claim holds is skipped after a second, not waited for. */
export const PRUNE_WAIT_SQL =
  'SET @aw_prune_wait = @@SESSION.innodb_lock_wait_timeout, SESSION innodb_lock_wait_timeout = 1'
/** The session's own bound, back after the round. */
export const PRUNE_RESTORE_SQL = 'SET SESSION innodb_lock_wait_timeout = @aw_prune_wait'

/** Expired keys of a table, by a consistent read (no locks), held rows kept. Parameter: the limit. */
export const pruneKeysSql = (table: string, key: string) =>
  `SELECT ${key} AS k FROM ${table} WHERE expires_at <= ${NOW_MS} AND claim_token IS NULL ORDER BY expires_at LIMIT ?`

/** Deletes those keys, checked again under the row lock. Parameters: the keys. */
export const pruneDeleteSql = (table: string, key: string, count: number) =>
  `DELETE t FROM ${table} AS t FORCE INDEX (PRIMARY) WHERE t.${key} IN (${Array.from({ length: count }, () => '?').join(', ')}) AND t.expires_at <= ${NOW_MS} AND t.claim_token IS NULL`

/**
 * The store's statements beside the layout's functions, with `$1` placeholders,
 * as node-postgres and postgres.js both send them: one copy of each text.
 */
import type { SchemaNames } from './schema.js'

/** A number as SQL text: the store only ever sends safe integers or NULL. */
export const int = (value: number | undefined): string => {
  if (value === undefined) return 'NULL'
  if (!Number.isSafeInteger(value)) throw new TypeError(`not a safe integer: ${value}`)
  return String(value)
}

/** What the claim function answers: a transaction id (claimed), or the settled verdict. */
export const TRANSACTION_ID = /^\d+$/

/**
 * How long after the lease the server ends a session idle in its transaction,
 * for the drivers that run {@link claimCallSql} (postgres.js, Prisma): the
 * store's own rollback at the lease comes first. postgres.js 3.4.9 throws an
 * uncaught exception when the server closes a connection in the moment a
 * write to it is queued (porsager/postgres#1208), so the server's bound is
 * only the backstop for a process too stuck to run its timers.
 */
export const SERVER_IDLE_MARGIN_MS = 2000

/**
 * The claim with the lease's bounds, in one parameterised statement:
 * `set_config(..., true)` is `SET LOCAL`. Parameters: leaseMs as text, event,
 * conversion, order, lockWait as text ('2000ms'), dedupeMs, orderingMs, and the
 * idle-session bound as text (leaseMs + {@link SERVER_IDLE_MARGIN_MS}).
 */
export const claimCallSql = (n: SchemaNames) =>
  `SELECT set_config('statement_timeout', $1, true), set_config('idle_in_transaction_session_timeout', $8, true), ${n.claim}($2, $3, $4, $5, $6, $7) AS verdict`

/** The values synchronous_commit takes: the only texts `syncLiteral` inlines. */
const SYNC_VALUES = new Set(['on', 'off', 'local', 'remote_write', 'remote_apply'])

/**
 * The synchronous_commit the store's commits are pinned to, as SQL: the value
 * the server gives a new session of this pool (read once at start), so that
 * a handler's `SET synchronous_commit = off` neither weakens its own commit
 * nor the next delivery's on the same connection. NULL (no pin) when unknown.
 */
export function syncLiteral(value: string | undefined): string {
  return value !== undefined && SYNC_VALUES.has(value) ? `'${value}'` : 'NULL'
}

/** Reads the synchronous_commit a new session of this pool gets (its reset value). */
export const SYNC_SETTING_SQL = `SELECT reset_val AS value FROM pg_settings WHERE name = 'synchronous_commit'`

const heldCall = (n: SchemaNames, xact: string, sync: string) =>
  `SELECT ${n.held}(${xact}::bigint, ${sync})`

/**
 * held(xact, sync): raises AWLST unless the transaction is still the claim's,
 * then signs the store's commit (the guard trigger refuses any other) and pins
 * synchronous_commit. Parameter: the claim's xact; `sync` from `syncLiteral`.
 */
export const heldSql = (n: SchemaNames, sync: string) => heldCall(n, '$1', sync)

/**
 * The same check with the claim's xact written into the text, no parameters:
 * postgres.js sends a statement without parameters in one write, pipelined
 * with the COMMIT behind it. (A parameterised statement new to a connection
 * is described first, and the COMMIT waits for its answer; if the handler has
 * ended the transaction itself, that answer finds the session idle, postgres.js
 * hands the connection back to its pool, and the waiting COMMIT is never sent.)
 */
export function heldLiteralSql(n: SchemaNames, xact: string, sync: string): string {
  if (!TRANSACTION_ID.test(xact)) throw new TypeError('not a transaction id')
  return heldCall(n, xact, sync)
}

/**
 * Before the store's BEGIN, in a query of its own (in BEGIN's query it would
 * join the transaction, and a ROLLBACK would undo it), on the connection the
 * store holds (postgres.js, which does not tell the transaction's status):
 * every transaction the session starts after the claim's own (which BEGINs
 * READ WRITE) is read-only.
 * A COMMIT or ROLLBACK of the handler's that got past every check ends the
 * claim's transaction; whatever the handler writes after it then fails on the
 * server (25006) instead of committing on its own, where the store's rollback
 * could not reach it. {@link SESSION_WRITABLE} ends it, after the store's COMMIT
 * or ROLLBACK, before the connection serves anyone else.
 */
export const SESSION_READ_ONLY = 'SET default_transaction_read_only = on'
/** The session as the pool gave it, after the store ended the claim's transaction. */
export const SESSION_WRITABLE = 'SET default_transaction_read_only = off'

/** peek: whether the event is done, and its conversion's committed watermark. Parameters: event, conversion. */
export const peekSql = (n: SchemaNames) =>
  `SELECT EXISTS (SELECT 1 FROM ${n.events} WHERE event_id = $1 AND expires_at > clock_timestamp()) AS done,
          c.watermark, c.event_id AS mark_event
     FROM (VALUES (1)) AS one (x)
     LEFT JOIN ${n.conversions} AS c ON c.conversion_id = $2 AND c.expires_at > clock_timestamp()`

/** The peek's row, read the same way from either driver (the watermark as text or bigint). */
export interface PeekRow {
  done: boolean
  watermark: string | number | bigint | null
  mark_event: string | null
}

/** The peek's verdict from its row. */
export function peekVerdict(
  row: PeekRow,
  eventId: string,
  order: number,
): 'duplicate' | 'stale' | 'unsettled' {
  if (row.done || row.mark_event === eventId) return 'duplicate'
  if (row.watermark !== null && Number(row.watermark) >= order) return 'stale'
  return 'unsettled'
}

/**
 * In a statement that commits on its own: its commit waits for no standby
 * (synchronous_commit = local, for this transaction only). For the streak and
 * prune writes, which a failover may lose harmlessly: a synchronous standby
 * gone must not keep a connection per failed answer waiting for it.
 */
const COMMIT_LOCALLY = `set_config('synchronous_commit', 'local', true)`

/** A 2xx resets the streak. */
export const streakResetSql = (n: SchemaNames) =>
  `DELETE FROM ${n.streak} WHERE name = 'answers' AND ${COMMIT_LOCALLY} IS NOT NULL`

/**
 * One more failed answer. Parameters: code, codes kept, dedupeMs. The codes
 * come back as one comma-separated text (streakOf), not as an array: postgres.js
 * parses an array only with `fetch_types` on, which a client may turn off.
 */
export const streakSql = (n: SchemaNames) =>
  `INSERT INTO ${n.streak} AS s (name, count, codes, expires_at)
   SELECT 'answers', 1, ARRAY[$1::text], clock_timestamp() + $3::bigint * interval '1 millisecond'
     FROM (SELECT ${COMMIT_LOCALLY}) AS local_commit
   ON CONFLICT (name) DO UPDATE SET
     count = CASE WHEN s.expires_at <= clock_timestamp() THEN 1 ELSE s.count + 1 END,
     codes = (ARRAY[$1::text] || CASE WHEN s.expires_at <= clock_timestamp() THEN '{}'::text[] ELSE s.codes END)[1:$2::integer],
     expires_at = EXCLUDED.expires_at
   RETURNING count, array_to_string(codes, ',') AS codes`

/** The streak streakSql returned. */
export const streakOf = (row: { count: unknown; codes: string }) => ({
  count: Number(row.count),
  recentCodes: row.codes.split(','),
})

/** Deletes at most `limit` expired rows of `table`, skipping rows a delivery holds. */
export const pruneSql = (table: string, limit: number) =>
  `DELETE FROM ${table} WHERE ctid = ANY (ARRAY(
     SELECT ctid FROM ${table} WHERE expires_at <= clock_timestamp() AND ${COMMIT_LOCALLY} IS NOT NULL LIMIT ${int(limit)}
     FOR UPDATE SKIP LOCKED))`

/** Pins the commit's synchronous_commit to `sync` (from `syncLiteral`), or to the session's when NULL. */
const pinCommit = (sync: string) =>
  `set_config('synchronous_commit', COALESCE(${sync}, current_setting('synchronous_commit')), true)`

/** The current transaction's id as pg_stat_activity shows it (backend_xid: 32 bits), as text. */
const XACT_TEXT = `(txid_current() % 4294967296)::text`

const EMIT_DUPLICATE = `pg_logical_emit_message(true, 'affiliate-webhooks', 'duplicate')`

/**
 * How a duplicate's transaction ends: committed with one transactional WAL
 * record of no effect (a logical decoding message, prefix
 * `affiliate-webhooks`), so that the commit waits for the synchronous standbys
 * as a mark's commit does. WAL reaches a standby in order: once this commit is
 * there, the mark the duplicate was judged on is too, and the 2xx answered for
 * it survives a failover. (A transaction that wrote nothing would not wait.)
 * Its commit is pinned like a mark's.
 */
export const durableDuplicateSql = (sync: string) =>
  `SELECT ${pinCommit(sync)}, ${EMIT_DUPLICATE}; COMMIT`

/**
 * The statement of {@link durableDuplicateSql} without its COMMIT, for a
 * driver that commits on its own (Prisma's `$transaction`): the pin, the
 * logical message, and the transaction's 32-bit id as text (`xact`), by which
 * the commit's wait for the standbys can be found in pg_stat_activity
 * ({@link cancelSyncWaitSql}). No pg_lsn column: Prisma cannot read one.
 */
export const durableDuplicateStatementSql = (sync: string) =>
  `SELECT ${pinCommit(sync)}, ${EMIT_DUPLICATE} IS NOT NULL AS emitted, ${XACT_TEXT} AS xact`

/** How a stale event's transaction ends: its mark committed, pinned like a claim's. */
export const staleCommitSql = (sync: string) => `SELECT ${pinCommit(sync)}; COMMIT`

/** The statement of {@link staleCommitSql} without its COMMIT, with the transaction's `xact` as above. */
export const staleCommitStatementSql = (sync: string) =>
  `SELECT ${pinCommit(sync)}, ${XACT_TEXT} AS xact`

/** A transaction id from txid_current() (64 bits, with its epoch) as pg_stat_activity's backend_xid shows it. */
export const backendXid = (xact: string): string => {
  if (!TRANSACTION_ID.test(xact)) throw new TypeError('not a transaction id')
  return String(BigInt(xact) % 4294967296n)
}

/**
 * Cancels a COMMIT's wait for the synchronous standbys from another session:
 * the server ends that wait on no timeout of its own (statement_timeout is
 * off by the time a COMMIT waits), and only a cancel ends it. The transaction
 * has committed on the primary then: the COMMIT returns with a WARNING, and
 * no standby may have it. Matched by the transaction's id ($1, as
 * {@link backendXid} gives it), never by the session alone, and only while
 * it waits for the standbys (wait_event SyncRep): a session that has moved on
 * to another transaction or statement is not touched. A role may cancel its
 * own sessions. One row (cancelled) if it was waiting, none otherwise.
 */
export const cancelSyncWaitSql = `SELECT pg_cancel_backend(pid) AS cancelled FROM pg_stat_activity WHERE backend_xid::text = $1 AND wait_event = 'SyncRep'`

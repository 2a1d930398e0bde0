/**
 * The tables and functions of the Postgres store, as one DDL text: the store runs
 * it on first use, and `affiliate-webhooks sql schema --postgres` prints it for
 * teams that run their own migrations.
 *
 * Tables (`p` = tablePrefix, default `aw_`), layout 2:
 *   p_conversions  conversion_id -> watermark, event_id   the newest order handled, and
 *                                                         its event: the handled mark
 *                                                         of a conversion event, and
 *                                                         (its row lock) the
 *                                                         conversion's lock
 *   p_events       event_id -> expires_at    events without a conversion (webhook.test)
 *                                            and events judged stale
 *   p_streak       name -> count, codes       answers in a row that were not 2xx
 *   p_schema       version                   which layout these tables have
 *
 * No advisory locks: the claim's upsert locks its row until the delivery's
 * transaction ends, and a killed process's lock goes with its connection.
 */
import { checkSqlIdentifier } from '@affiliate-webhooks/core/internal'

/** The layout these functions expect; a table of another version is refused. */
export const POSTGRES_SCHEMA_VERSION = 3

/** Where the store's tables live. */
export interface PostgresSchemaOptions {
  /** Prefix of every table and function name. Default `aw_`. */
  tablePrefix?: string | undefined
  /** The schema holding them. Default: the connection's `search_path` (usually `public`). */
  schema?: string | undefined
}

/** Names, checked once, and the setup's advisory-lock namespace derived from them. */
export interface SchemaNames {
  /** `schema.` or empty. */
  qualifier: string
  prefix: string
  events: string
  conversions: string
  streak: string
  version: string
  claim: string
  settle: string
  held: string
  /** The trigger function that refuses a claim's commit the store did not make. */
  guard: string
  /** The deferred constraint triggers' name (one on each claimed table). */
  trigger: string
  /**
   * The advisory-lock namespace (int4) of the DDL: processes starting together
   * create the tables one at a time. Deliveries take no advisory lock.
   */
  lockSpace: { ddl: number }
}

/** FNV-1a to a signed int4: stable namespaces, different for each prefix and schema. */
function int4Hash(text: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return hash | 0
}

export function schemaNames(options: PostgresSchemaOptions, caller: string): SchemaNames {
  const prefix = checkSqlIdentifier(caller, 'tablePrefix', options.tablePrefix ?? 'aw_')
  const { schema } = options
  if (schema !== undefined) checkSqlIdentifier(caller, 'schema', schema)
  const qualifier = schema === undefined ? '' : `${schema}.`
  const name = (suffix: string) => `${qualifier}${prefix}${suffix}`
  const space = `${schema ?? ''}.${prefix}`
  return {
    qualifier,
    prefix,
    events: name('events'),
    conversions: name('conversions'),
    streak: name('streak'),
    version: name('schema'),
    claim: name('claim'),
    settle: name('settle'),
    held: name('held'),
    guard: name('commit_guard'),
    trigger: `${prefix}claim_commit`,
    lockSpace: { ddl: int4Hash(`${space}:ddl`) },
  }
}

/**
 * Puts `schema.` before every table and function name of `names`, in place
 * (the store's statements read them when they run); the DDL lock's namespace
 * stays the one every process of this configuration uses.
 */
export function qualifyNames(names: SchemaNames, schema: string): void {
  const { prefix, lockSpace } = names
  Object.assign(names, schemaNames({ tablePrefix: prefix, schema }, 'postgresStore'), {
    lockSpace,
  })
}

/**
 * The columns each table of this layout has, by name suffix: a table that exists
 * without them was made by something else (an older version, another tool) and
 * is refused rather than used.
 */
export const TABLE_COLUMNS = {
  events: ['event_id', 'expires_at'],
  conversions: ['conversion_id', 'watermark', 'event_id', 'expires_at'],
  streak: ['name', 'count', 'codes', 'expires_at'],
} as const

/** `CREATE SCHEMA` for a schema option, or nothing: the tables' schema must exist first. */
export const createSchemaSql = (options: PostgresSchemaOptions): string[] =>
  options.schema === undefined ? [] : [`CREATE SCHEMA IF NOT EXISTS ${options.schema}`]

/** The version table alone: read first, so a table of another version is never touched. */
export const versionTableSql = (n: SchemaNames) =>
  `CREATE TABLE IF NOT EXISTS ${n.version} (version integer NOT NULL)`

/**
 * Everything but the version row. Every statement is idempotent. No index on
 * expires_at: a watermark's update then touches no index (a HOT update), and the
 * pruning that would use it runs once a minute in batches, off the delivery path.
 */
function tablesSql(n: SchemaNames): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${n.events} (
  event_id text PRIMARY KEY,
  expires_at timestamptz NOT NULL
)`,
    `CREATE TABLE IF NOT EXISTS ${n.conversions} (
  conversion_id bigint PRIMARY KEY,
  watermark bigint NOT NULL,
  event_id text NOT NULL,
  expires_at timestamptz NOT NULL
)`,
    `CREATE TABLE IF NOT EXISTS ${n.streak} (
  name text PRIMARY KEY,
  count integer NOT NULL,
  codes text[] NOT NULL,
  expires_at timestamptz NOT NULL
)`,
  ]
}

/** The transaction-local setting a claim sets: this transaction wrote a claim's row. */
const CLAIM_SETTING = 'affiliate_webhooks.claim'
/** The transaction-local setting held() sets: the store itself commits this transaction. */
const COMMIT_SETTING = 'affiliate_webhooks.commit'
/** The SQLSTATE of a commit the guard refused: the handler ended the transaction itself. */
export const ESCAPE_REFUSED = 'AWESC'

/** `p_ms` milliseconds from the transaction's start, as a timestamptz. */
const after = (ms: string) => `now() + ${ms} * interval '1 millisecond'`

/**
 * claim(event, conversion, order, lockWait, dedupeMs, orderingMs) -> the
 * transaction's id (claimed: the row is this transaction's until it ends),
 * 'duplicate' or 'stale' (marked done: the caller commits). Runs in the
 * caller's READ COMMITTED transaction, whose statement and idle bounds the
 * caller set with BEGIN. A row held by another live transaction is waited for
 * at most `lockWait` (lock_timeout, for this function only: its SET clause puts
 * the caller's value back on return, so the handler's own statements keep it);
 * past it the call fails with 55P03 (lock_not_available), answered in_progress.
 */
function claimSql(n: SchemaNames): string {
  return `CREATE OR REPLACE FUNCTION ${n.claim}(
  p_event text, p_conversion bigint, p_order bigint,
  p_lock_wait text, p_dedupe_ms bigint, p_ordering_ms bigint
) RETURNS text LANGUAGE plpgsql VOLATILE SET lock_timeout = 0 SET search_path FROM CURRENT AS $fn$
DECLARE
  v_mark bigint;
  v_event text;
BEGIN
  PERFORM set_config('lock_timeout', p_lock_wait, true);
  -- Marks the rows this call writes as a claim's: the guard trigger then lets
  -- them commit only through the store's held() (settle, which the store
  -- commits itself, takes the mark off first).
  PERFORM set_config('${CLAIM_SETTING}', 'claim', true);
  IF p_conversion IS NULL THEN
    -- No conversion (webhook.test): the event's own row is its mark and its lock.
    INSERT INTO ${n.events} AS e (event_id, expires_at)
      VALUES (p_event, ${after('p_dedupe_ms')})
      ON CONFLICT (event_id) DO UPDATE SET expires_at = EXCLUDED.expires_at
      WHERE e.expires_at <= now();
    IF FOUND THEN
      RETURN txid_current()::text;
    END IF;
    RETURN 'duplicate';
  END IF;
  -- The committed watermark, read without a lock: an event at or below it is
  -- settled at once, even while a newer event of the conversion holds the row.
  SELECT watermark, event_id INTO v_mark, v_event FROM ${n.conversions}
    WHERE conversion_id = p_conversion AND expires_at > now();
  IF v_mark >= p_order THEN
    RETURN ${n.settle}(p_event, v_event, p_dedupe_ms);
  END IF;
  -- Takes the row (and so the conversion) until the transaction ends. The row
  -- is locked even when the WHERE fails: another transaction raised it first.
  INSERT INTO ${n.conversions} AS c (conversion_id, watermark, event_id, expires_at)
    VALUES (p_conversion, p_order, p_event, ${after('p_ordering_ms')})
    ON CONFLICT (conversion_id) DO UPDATE SET
      watermark = EXCLUDED.watermark, event_id = EXCLUDED.event_id, expires_at = EXCLUDED.expires_at
    WHERE c.watermark < EXCLUDED.watermark OR c.expires_at <= now();
  IF FOUND THEN
    RETURN txid_current()::text;
  END IF;
  -- A new statement: under READ COMMITTED it sees what the winner committed.
  SELECT event_id INTO v_event FROM ${n.conversions} WHERE conversion_id = p_conversion;
  RETURN ${n.settle}(p_event, v_event, p_dedupe_ms);
END
$fn$`
}

/**
 * settle(event, watermark's event, dedupeMs) -> 'duplicate' or 'stale' for a
 * conversion event at or below the committed watermark. The watermark's own
 * event is a duplicate; another is stale, and marked in the events table so
 * that its retry is a duplicate too.
 */
function settleSql(n: SchemaNames): string {
  return `CREATE OR REPLACE FUNCTION ${n.settle}(
  p_event text, p_mark_event text, p_dedupe_ms bigint
) RETURNS text LANGUAGE plpgsql VOLATILE SET search_path FROM CURRENT AS $fn$
BEGIN
  PERFORM set_config('${CLAIM_SETTING}', '', true);
  IF p_event = p_mark_event OR EXISTS (
    SELECT 1 FROM ${n.events} WHERE event_id = p_event AND expires_at > now()
  ) THEN
    RETURN 'duplicate';
  END IF;
  INSERT INTO ${n.events} (event_id, expires_at) VALUES (p_event, ${after('p_dedupe_ms')})
    ON CONFLICT (event_id) DO UPDATE SET expires_at = EXCLUDED.expires_at;
  RETURN 'stale';
END
$fn$`
}

/**
 * held(xact, synchronous_commit): raises AWLST unless the current transaction
 * is the claim's (the handler did not end it with its own COMMIT or ROLLBACK),
 * so the COMMIT sent after it in the same query never commits a transaction
 * without the claim. Then it signs the commit (the token the guard trigger
 * asks for) and pins synchronous_commit for this transaction to the value the
 * store read at start, whatever the handler set in the session. held(xact)
 * alone is the layout-2 call, kept for processes of the previous version
 * during a rolling upgrade.
 */
function heldSql(n: SchemaNames): string {
  // No SET clause: it would undo the settings made here as the function returns.
  return `CREATE OR REPLACE FUNCTION ${n.held}(p_xact bigint, p_sync text) RETURNS void
LANGUAGE plpgsql VOLATILE AS $fn$
BEGIN
  IF txid_current_if_assigned() IS DISTINCT FROM p_xact THEN
    RAISE EXCEPTION 'the claim''s transaction was ended before the store''s commit (by the handler?)'
      USING ERRCODE = 'AWLST';
  END IF;
  PERFORM set_config('${COMMIT_SETTING}', p_xact::text, true);
  IF p_sync IS NOT NULL THEN
    PERFORM set_config('synchronous_commit', p_sync, true);
  END IF;
END
$fn$`
}

const heldOneSql = (n: SchemaNames) =>
  `CREATE OR REPLACE FUNCTION ${n.held}(p_xact bigint) RETURNS void
LANGUAGE sql VOLATILE AS $fn$ SELECT ${n.held}(p_xact, NULL) $fn$`

/**
 * The guard: a deferred constraint trigger on the rows a claim writes, run at
 * COMMIT. A row written by a claim (the claim marked its transaction) commits
 * only when the store's held() signed this very transaction: a COMMIT the
 * handler got past every check (hidden in a text the store could not read)
 * fails with AWESC instead, and the server rolls the whole attempt back, the
 * handled mark with it, so the retry runs the handler on a clean slate. Rows
 * written outside a claim (a migration, an operator) are not looked at.
 */
function guardSql(n: SchemaNames): string {
  return `CREATE OR REPLACE FUNCTION ${n.guard}() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $fn$
BEGIN
  IF current_setting('${COMMIT_SETTING}', true) IS DISTINCT FROM txid_current()::text THEN
    RAISE EXCEPTION 'a COMMIT the store did not send would have made this event''s handled mark durable without the rest of its handler: refused, and the whole attempt rolled back'
      USING ERRCODE = '${ESCAPE_REFUSED}';
  END IF;
  RETURN NULL;
END
$fn$`
}

/** The trigger on one claimed table: deferred, fired for rows a claim wrote. */
const triggerSql = (n: SchemaNames, table: string) => [
  `DROP TRIGGER IF EXISTS ${n.trigger} ON ${table}`,
  `CREATE CONSTRAINT TRIGGER ${n.trigger} AFTER INSERT OR UPDATE ON ${table}
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (current_setting('${CLAIM_SETTING}', true) <> '')
  EXECUTE FUNCTION ${n.guard}()`,
]

/** The DDL after the version table: the tables and the three functions. */
export function schemaStatements(n: SchemaNames): string[] {
  return [
    ...tablesSql(n),
    settleSql(n),
    claimSql(n),
    heldSql(n),
    heldOneSql(n),
    guardSql(n),
    ...triggerSql(n, n.conversions),
    ...triggerSql(n, n.events),
  ]
}

/**
 * The whole DDL as one text, for a migration: the version table, the tables, the
 * functions and the version row. Running it twice changes nothing.
 */
export function postgresSchema(options: PostgresSchemaOptions = {}): string {
  const n = schemaNames(options, 'postgresSchema')
  const statements = [
    ...createSchemaSql(options),
    versionTableSql(n),
    ...schemaStatements(n),
    `INSERT INTO ${n.version} (version)
  SELECT ${POSTGRES_SCHEMA_VERSION} WHERE NOT EXISTS (SELECT 1 FROM ${n.version})`,
  ]
  return `-- @affiliate-webhooks/postgres, schema version ${POSTGRES_SCHEMA_VERSION}\n${statements.map((s) => `${s};\n`).join('\n')}`
}

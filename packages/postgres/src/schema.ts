/**
 * The tables and functions of the Postgres store, as one DDL text: the store runs
 * it on first use, and `affiliate-webhooks sql schema --postgres` prints it for
 * teams that run their own migrations.
 *
 * Tables (`p` = tablePrefix, default `aw_`):
 *   p_events       event_id -> expires_at    handled (or judged stale), kept dedupeTtl
 *   p_conversions  conversion_id -> watermark the newest order handled, kept orderingTtl
 *   p_streak       name -> count, codes       answers in a row that were not 2xx
 *   p_schema       version                   which layout these tables have
 *
 * Locks are transaction-level advisory locks, never rows: the event's is tried
 * without waiting (held -> in_progress at once), the conversion's waited for at
 * most lockWaitMs. Both go when the transaction ends, and so when its connection
 * does: a killed process holds nothing.
 */

/** The layout these functions expect; a table of another version is refused. */
export const POSTGRES_SCHEMA_VERSION = 1

/** Where the store's tables live. */
export interface PostgresSchemaOptions {
  /** Prefix of every table and function name. Default `aw_`. */
  tablePrefix?: string | undefined
  /** The schema holding them. Default: the connection's `search_path` (usually `public`). */
  schema?: string | undefined
}

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,39}$/

/** Names, checked once, and the advisory-lock namespaces derived from them. */
export interface SchemaNames {
  /** `schema.` or empty. */
  qualifier: string
  prefix: string
  events: string
  conversions: string
  streak: string
  version: string
  begin: string
  commit: string
  /** Advisory-lock namespaces (int4) for events, conversions and the DDL itself. */
  lockSpace: { event: number; conversion: number; ddl: number }
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
  const prefix = options.tablePrefix ?? 'aw_'
  const { schema } = options
  if (!IDENTIFIER.test(prefix)) {
    throw new TypeError(
      `${caller}: \`tablePrefix\` must be lower-case letters, digits and _ (at most 40), starting with a letter or _; got ${JSON.stringify(prefix)}`,
    )
  }
  if (schema !== undefined && !IDENTIFIER.test(schema)) {
    throw new TypeError(
      `${caller}: \`schema\` must be lower-case letters, digits and _, starting with a letter or _; got ${JSON.stringify(schema)}`,
    )
  }
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
    begin: name('begin'),
    commit: name('commit'),
    lockSpace: {
      event: int4Hash(`${space}:event`),
      conversion: int4Hash(`${space}:conversion`),
      ddl: int4Hash(`${space}:ddl`),
    },
  }
}

/**
 * The columns each table of this layout has, by name suffix: a table that exists
 * without them was made by something else (an older version, another tool) and
 * is refused rather than used.
 */
export const TABLE_COLUMNS = {
  events: ['event_id', 'expires_at'],
  conversions: ['conversion_id', 'watermark', 'expires_at'],
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

/** The conversion's advisory-lock key: an int4, the same for ids 2^32 apart (they share a lock). */
const conversionKey = (arg: string) =>
  `((((${arg} % 4294967296) + 4294967296) % 4294967296) - 2147483648)::integer`

/**
 * begin(event, conversion, order, lockWaitMs, leaseMs, dedupeMs) -> 'claimed' |
 * 'duplicate' | 'stale' | 'in_progress', inside the caller's transaction (READ
 * COMMITTED: each statement sees what committed before it, so the watermark read
 * after the conversion lock is the newest). On 'stale' the event is marked done
 * and the caller commits; on 'claimed' the transaction is the handler's. The
 * caller bounds it by the lease (SET LOCAL statement and idle-in-transaction
 * timeouts in the same query as BEGIN, cheaper than set_config here); leaseMs
 * stays in the signature of layout 1 and is not read.
 */
function beginSql(n: SchemaNames): string {
  return `CREATE OR REPLACE FUNCTION ${n.begin}(
  p_event text, p_conversion bigint, p_order bigint,
  p_lock_wait_ms integer, p_lease_ms integer, p_dedupe_ms bigint
) RETURNS text LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
  v_mark bigint;
  v_lock_timeout text;
BEGIN
  IF NOT pg_try_advisory_xact_lock(${n.lockSpace.event}, hashtext(p_event)) THEN
    RETURN 'in_progress';
  END IF;
  -- A duplicate is answered before the conversion's lock: it never waits.
  IF EXISTS (SELECT 1 FROM ${n.events}
             WHERE event_id = p_event AND expires_at > clock_timestamp()) THEN
    RETURN 'duplicate';
  END IF;
  IF p_conversion IS NOT NULL THEN
    -- Uncontended, the lock is taken at once; only a busy conversion pays for the
    -- bounded wait and its exception block (a subtransaction).
    IF NOT pg_try_advisory_xact_lock(${n.lockSpace.conversion}, ${conversionKey('p_conversion')}) THEN
      v_lock_timeout := current_setting('lock_timeout');
      PERFORM set_config('lock_timeout', p_lock_wait_ms || 'ms', true);
      BEGIN
        PERFORM pg_advisory_xact_lock(${n.lockSpace.conversion}, ${conversionKey('p_conversion')});
      EXCEPTION WHEN lock_not_available THEN
        RETURN 'in_progress';
      END;
      PERFORM set_config('lock_timeout', v_lock_timeout, true);
    END IF;
    SELECT watermark INTO v_mark FROM ${n.conversions}
      WHERE conversion_id = p_conversion AND expires_at > clock_timestamp();
    IF v_mark IS NOT NULL AND v_mark >= p_order THEN
      INSERT INTO ${n.events} (event_id, expires_at)
        VALUES (p_event, clock_timestamp() + p_dedupe_ms * interval '1 millisecond')
        ON CONFLICT (event_id) DO UPDATE SET expires_at = EXCLUDED.expires_at;
      RETURN 'stale';
    END IF;
  END IF;
  RETURN 'claimed';
END
$fn$`
}

/** commit(event, conversion, order, dedupeMs, orderingMs): the handled mark and the watermark. */
function commitSql(n: SchemaNames): string {
  return `CREATE OR REPLACE FUNCTION ${n.commit}(
  p_event text, p_conversion bigint, p_order bigint, p_dedupe_ms bigint, p_ordering_ms bigint
) RETURNS void LANGUAGE plpgsql VOLATILE AS $fn$
BEGIN
  INSERT INTO ${n.events} (event_id, expires_at)
    VALUES (p_event, clock_timestamp() + p_dedupe_ms * interval '1 millisecond')
    ON CONFLICT (event_id) DO UPDATE SET expires_at = EXCLUDED.expires_at;
  IF p_conversion IS NOT NULL THEN
    INSERT INTO ${n.conversions} AS c (conversion_id, watermark, expires_at)
      VALUES (p_conversion, p_order, clock_timestamp() + p_ordering_ms * interval '1 millisecond')
      ON CONFLICT (conversion_id) DO UPDATE SET
        watermark = CASE WHEN c.expires_at <= clock_timestamp() OR c.watermark < EXCLUDED.watermark
                         THEN EXCLUDED.watermark ELSE c.watermark END,
        expires_at = EXCLUDED.expires_at;
  END IF;
END
$fn$`
}

/** The DDL after the version table: tables, indexes and the two functions. */
export function schemaStatements(n: SchemaNames): string[] {
  return [...tablesSql(n), beginSql(n), commitSql(n)]
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

/**
 * The tables of the SQLite store, as one DDL text: the store runs it on first
 * use, and `sqliteSchema()` returns it for teams that run their own migrations.
 *
 * Tables (`p` = tablePrefix, default `aw_`), layout 3 (layout 2 of Postgres and
 * MySQL, plus the claim's marker):
 *   p_conversions  conversion_id -> watermark, event_id, expires_at   the handled mark
 *                  claim_token, prev_watermark, prev_event_id         the claim's marker
 *   p_events       event_id -> expires_at, claim_token    events without a conversion, and stale ones
 *   p_streak       name -> count, codes (JSON), expires_at
 *   p_schema       version
 * Times are milliseconds since the epoch: every process on one file shares a clock.
 *
 * The marker: a claim writes its token (and the row it replaced) with the mark,
 * and the store's own final statement clears it before its COMMIT. SQLite
 * cannot refuse a COMMIT the store did not send, and a crash rolls back an
 * uncommitted claim, so a committed row whose token is set was made durable by
 * a statement of the handler: the event is held, never answered duplicate.
 */
import { checkSqlIdentifier } from '@affiliate-webhooks/core/internal'

/** The layout these statements expect; a table of another version is refused. */
export const SQLITE_SCHEMA_VERSION = 3

/** Where the store's tables live. */
export interface SqliteSchemaOptions {
  /** Prefix of every table name. Default `aw_`. */
  tablePrefix?: string | undefined
}

export interface SqliteNames {
  events: string
  conversions: string
  streak: string
  version: string
}

export function sqliteNames(options: SqliteSchemaOptions, caller: string): SqliteNames {
  const prefix = checkSqlIdentifier(caller, 'tablePrefix', options.tablePrefix ?? 'aw_')
  return {
    events: `${prefix}events`,
    conversions: `${prefix}conversions`,
    streak: `${prefix}streak`,
    version: `${prefix}schema`,
  }
}

/** Every table, idempotent. */
export function tableStatements(n: SqliteNames): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${n.version} (version INTEGER NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS ${n.events} (
  event_id TEXT PRIMARY KEY,
  expires_at INTEGER NOT NULL,
  claim_token TEXT
)`,
    `CREATE TABLE IF NOT EXISTS ${n.conversions} (
  conversion_id INTEGER PRIMARY KEY,
  watermark INTEGER NOT NULL,
  event_id TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  claim_token TEXT,
  prev_watermark INTEGER,
  prev_event_id TEXT
)`,
    `CREATE TABLE IF NOT EXISTS ${n.streak} (
  name TEXT PRIMARY KEY,
  count INTEGER NOT NULL,
  codes TEXT NOT NULL,
  expires_at INTEGER NOT NULL
)`,
  ]
}

/**
 * Layout 2 to 3, in place: the marker's columns, NULL in every row (nothing
 * held). Adding a nullable column rewrites no row in SQLite.
 */
export function upgradeStatements(n: SqliteNames, from: number): string[] | undefined {
  if (from !== 2) return undefined
  return [
    `ALTER TABLE ${n.events} ADD COLUMN claim_token TEXT`,
    `ALTER TABLE ${n.conversions} ADD COLUMN claim_token TEXT`,
    `ALTER TABLE ${n.conversions} ADD COLUMN prev_watermark INTEGER`,
    `ALTER TABLE ${n.conversions} ADD COLUMN prev_event_id TEXT`,
    `UPDATE ${n.version} SET version = ${SQLITE_SCHEMA_VERSION}`,
  ]
}

/** The whole DDL as one text, for a migration. Running it twice changes nothing. */
export function sqliteSchema(options: SqliteSchemaOptions = {}): string {
  const n = sqliteNames(options, 'sqliteSchema')
  const statements = [
    ...tableStatements(n),
    `INSERT INTO ${n.version} (version)
  SELECT ${SQLITE_SCHEMA_VERSION} WHERE NOT EXISTS (SELECT 1 FROM ${n.version})`,
  ]
  return `-- @affiliate-webhooks/sqlite, schema version ${SQLITE_SCHEMA_VERSION}\n${statements.map((s) => `${s};\n`).join('\n')}`
}

import {
  createSchemaSql,
  POSTGRES_SCHEMA_VERSION,
  qualifyNames,
  type SchemaNames,
  schemaStatements,
  TABLE_COLUMNS,
  versionTableSql,
} from './schema.js'
import { SYNC_SETTING_SQL, syncLiteral } from './statements.js'

/** The functions of this layout, with their argument types, as `to_regprocedure` names them. */
const routineSignatures = (names: SchemaNames) => [
  `${names.claim}(text, bigint, bigint, text, bigint, bigint)`,
  `${names.settle}(text, text, bigint)`,
  `${names.held}(bigint)`,
  `${names.held}(bigint, text)`,
  `${names.guard}()`,
]

interface Recorded {
  version: number | undefined
  /** Every function of the layout exists. */
  routines: boolean
}

/**
 * One statement's rows, `$1` placeholders: how the setup talks to either driver
 * (node-postgres or postgres.js), each bounding the statement its own way.
 */
export type RunSql = <Row>(text: string, params?: unknown[]) => Promise<Row[]>

/** What the setup needs of a driver: single statements, one transaction, and its own words for a failure. */
export interface SetupDriver {
  /** One statement on a connection of its own. */
  run: RunSql
  /** `work` inside one transaction: committed if it resolves, else rolled back (or its session dropped). */
  transaction(work: (run: RunSql) => Promise<void>): Promise<void>
  /** A clear error for a database that cannot be reached, naming it (never its secret). */
  failure(cause: unknown): Error
}

/**
 * The version recorded in the version table (undefined without a row), and
 * whether the functions exist. Lists go to the server as JSON in a text
 * parameter (`$1::text::json`: a json one postgres.js would encode again) and
 * come back as text, never as arrays: postgres.js converts arrays only with
 * `fetch_types` on, which a client may turn off.
 */
async function recorded(run: RunSql, names: SchemaNames): Promise<Recorded> {
  const rows = await run<{ version: number | null; routines: boolean }>(
    `SELECT (SELECT version FROM ${names.version} LIMIT 1) AS version,
            (SELECT bool_and(to_regprocedure(f) IS NOT NULL)
               FROM json_array_elements_text($1::text::json) AS f) AS routines`,
    [JSON.stringify(routineSignatures(names))],
  )
  const row = rows[0] as { version: number | null; routines: boolean }
  return { version: row.version ?? undefined, routines: row.routines }
}

function wrongVersion(found: number, names: SchemaNames): Error {
  if (found === 1) return layoutOne(names)
  return new Error(
    `postgresStore: the table ${names.version} says its tables have layout version ${found}, and this version of @affiliate-webhooks/postgres needs ${POSTGRES_SCHEMA_VERSION}. Migrate them (affiliate-webhooks sql schema --postgres prints this version's DDL), or use another tablePrefix.`,
  )
}

/**
 * The upgrade from layout 1 (a mark per event, advisory locks) to layout 2 (one
 * row per conversion), in place, every watermark and mark kept. It leaves no
 * version row, so the next start (or the printed DDL) creates this layout's
 * functions and stamps it. A layout-1 watermark has no event id: its event's
 * retry is found by its layout-1 mark, or answered stale, the same 200.
 */
export function upgradeFromOneSql(names: SchemaNames): string {
  return [
    `ALTER TABLE ${names.conversions} ADD COLUMN IF NOT EXISTS event_id text NOT NULL DEFAULT ''`,
    `DROP FUNCTION IF EXISTS ${names.qualifier}${names.prefix}begin, ${names.qualifier}${names.prefix}commit`,
    `DELETE FROM ${names.version}`,
  ]
    .map((statement) => `${statement};`)
    .join(' ')
}

/** Layout 1 found: what changed, and the two ways to upgrade. */
function layoutOne(names: SchemaNames): Error {
  return new Error(
    `postgresStore: the ${names.prefix} tables have layout version 1 (advisory locks, a mark per event), and this version of @affiliate-webhooks/postgres needs layout ${POSTGRES_SCHEMA_VERSION} (one row per conversion: its row lock is the conversion's lock). Stop every process of the older version, then upgrade in place, keeping every watermark: ${upgradeFromOneSql(names)} The next start creates the rest (or run the DDL of affiliate-webhooks sql schema --postgres). Or drop the tables ${names.events}, ${names.conversions}, ${names.streak} and ${names.version} for a fresh layout ${POSTGRES_SCHEMA_VERSION} (events handled before are then forgotten: a redelivery within dedupeTtl runs its handler again).`,
  )
}

function missingRoutines(names: SchemaNames): Error {
  return new Error(
    `postgresStore: ${names.version} says layout ${POSTGRES_SCHEMA_VERSION}, but the functions ${names.claim}, ${names.settle} or ${names.held} are missing (a migration run in part?). Run the DDL of affiliate-webhooks sql schema --postgres again: every statement is idempotent.`,
  )
}

/** Is `code` a missing table or schema (the store's tables were never created)? */
const isUndefinedTable = (error: unknown) => {
  const code = (error as { code?: string }).code
  return code === '42P01' || code === '3F000'
}

/**
 * Refuses store tables that exist without a version row but lack this layout's
 * columns: made by an older version or by something else, never used silently.
 * (Tables with every column are kept: a setup that stopped half-way.)
 */
async function checkExistingTables(run: RunSql, names: SchemaNames): Promise<void> {
  const tables = Object.entries(TABLE_COLUMNS).map(([suffix, columns]) => ({
    name: names[suffix as keyof typeof TABLE_COLUMNS],
    columns,
  }))
  const rows = await run<{ name: string; columns: string }>(
    `SELECT t.name, array_to_json(ARRAY(SELECT attname::text FROM pg_attribute
                           WHERE attrelid = to_regclass(t.name) AND attnum > 0 AND NOT attisdropped))::text AS columns
       FROM json_array_elements_text($1::text::json) AS t(name) WHERE to_regclass(t.name) IS NOT NULL`,
    [JSON.stringify(tables.map((table) => table.name))],
  )
  for (const row of rows) {
    const expected = tables.find((table) => table.name === row.name)?.columns ?? []
    const found = JSON.parse(row.columns) as string[]
    const missing = expected.filter((column) => !found.includes(column))
    if (missing.length === 0) continue
    throw new Error(
      `postgresStore: the table ${row.name} exists, with no version row in ${names.version}, and lacks the column(s) ${missing.join(', ')}: it was made by an older version of @affiliate-webhooks/postgres or by something else. Migrate or drop it, or use another tablePrefix.`,
    )
  }
}

/** Inside the DDL lock: creates the schema, the tables, the functions and the version row, or refuses. */
async function createAll(run: RunSql, names: SchemaNames): Promise<void> {
  // A column of type void: Prisma (which runs this text too) cannot read one.
  await run(`SELECT 1 AS locked FROM pg_advisory_xact_lock(${names.lockSpace.ddl}, 0)`)
  const schema = names.qualifier.slice(0, -1)
  if (schema !== '') {
    const rows = await run<{ missing: boolean }>('SELECT to_regnamespace($1) IS NULL AS missing', [
      schema,
    ])
    if (rows[0]?.missing) {
      for (const statement of createSchemaSql({ schema })) await run(statement)
    }
  }
  await run(versionTableSql(names))
  const rows = await run<{ version: number }>(`SELECT version FROM ${names.version} LIMIT 1`)
  const now = rows[0]?.version
  if (now === POSTGRES_SCHEMA_VERSION) return
  if (now === 2) {
    // Layout 2 has every table and column of 3: the functions are replaced and
    // the guard trigger added, in place, in this transaction.
    for (const statement of schemaStatements(names)) await run(statement)
    await run(`UPDATE ${names.version} SET version = $1`, [POSTGRES_SCHEMA_VERSION])
    return
  }
  if (now !== undefined) throw wrongVersion(now, names)
  await checkExistingTables(run, names)
  for (const statement of schemaStatements(names)) await run(statement)
  await run(`INSERT INTO ${names.version} (version) VALUES ($1)`, [POSTGRES_SCHEMA_VERSION])
}

/**
 * Creates what is missing, once, under an advisory lock so processes starting
 * together do not race on CREATE; then checks the version. Tables whose version
 * row matches are not touched at all, so an app whose role cannot CREATE runs
 * against tables made by a migration.
 */
export async function ensureSchema(driver: SetupDriver, names: SchemaNames): Promise<void> {
  let found: Recorded | undefined
  try {
    found = await recorded(driver.run, names)
  } catch (error) {
    if (!isUndefinedTable(error)) throw driver.failure(error)
  }
  if (found?.version === POSTGRES_SCHEMA_VERSION) {
    if (!found.routines) throw missingRoutines(names)
    return
  }
  if (found?.version !== undefined && found.version !== 2) throw wrongVersion(found.version, names)
  await driver.transaction((run) => createAll(run, names))
}

/** What the store reads of the server once its tables are there. */
export interface ServerFacts {
  /** synchronous_commit as SQL for the store's commits to pin (`syncLiteral`). */
  sync: string
}

/** A schema name the store may write unquoted into its statements. */
const PLAIN_NAME = /^[a-z_][a-z0-9_]{0,62}$/

/**
 * Reads what the store's commits pin (the synchronous_commit a new session
 * gets), and qualifies the store's names with the schema its tables were
 * found in: the store's calls then do not depend on the session's
 * search_path, which a handler may have changed on a pooled connection.
 */
export async function readServerFacts(run: RunSql, names: SchemaNames): Promise<ServerFacts> {
  const rows = await run<{ value: string | null; schema: string | null }>(
    `SELECT (${SYNC_SETTING_SQL}) AS value,
            (SELECT n.nspname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE c.oid = to_regclass($1)) AS schema`,
    [names.conversions],
  )
  const row = rows[0]
  if (names.qualifier === '' && row?.schema != null && PLAIN_NAME.test(row.schema)) {
    qualifyNames(names, row.schema)
  }
  return { sync: syncLiteral(row?.value ?? undefined) }
}

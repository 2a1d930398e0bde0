import {
  CONVERSIONS_MARKER_COLUMNS,
  EVENTS_MARKER_COLUMNS,
  MYSQL_SCHEMA_VERSION,
  type SchemaNames,
  schemaStatements,
  TABLE_COLUMNS,
  versionRowSql,
  versionTableSql,
} from './schema.js'

/**
 * One statement on one connection (the setup's named lock is the session's),
 * `?` placeholders, its rows: how the setup talks to mysql2 or to Prisma.
 */
export type MysqlRun = <Row>(sql: string, values?: unknown[]) => Promise<Row[]>

/** `?, ?, ?` for a list: each value its own placeholder, as every driver sends them. */
export const placeholders = (values: readonly unknown[]) => values.map(() => '?').join(', ')

/** The version recorded in the version table, or undefined when it has no row (or no table) yet. */
async function recordedVersion(run: MysqlRun, names: SchemaNames): Promise<number | undefined> {
  try {
    const rows = await run<{ version: number | string | bigint | null }>(
      `SELECT MAX(version) AS version FROM ${names.version}`,
    )
    const version = rows[0]?.version
    return version === null || version === undefined ? undefined : Number(version)
  } catch (error) {
    // ER_NO_SUCH_TABLE: never created here (errno from mysql2, code through Prisma).
    const { errno, code } = error as { errno?: number; code?: unknown }
    if (errno === 1146 || code === '1146') return undefined
    throw error
  }
}

function wrongVersion(found: number, names: SchemaNames): Error {
  if (found === 1) return layoutOne(names)
  return new Error(
    `mysqlStore: the table ${unquoted(names.version)} says its tables have layout version ${found}, and this version of @affiliate-webhooks/mysql needs ${MYSQL_SCHEMA_VERSION}. Migrate them (affiliate-webhooks sql schema --mysql prints this version's DDL), or use another tablePrefix.`,
  )
}

const unquoted = (name: string) => name.replaceAll('`', '')

/**
 * The upgrade from layout 1 (named locks, a mark per event) to layout 2 (one
 * row per conversion), in place, every watermark and mark kept. It leaves no
 * version row, so the next start (or the printed DDL) creates this layout's
 * procedures and stamps it. A layout-1 watermark has no event id: its event's
 * retry is found by its layout-1 mark, or answered stale, the same 200.
 */
export function upgradeFromOneSql(names: SchemaNames): string {
  return [
    `ALTER TABLE ${unquoted(names.conversions)} ADD COLUMN event_id VARBINARY(255) NOT NULL DEFAULT '' AFTER watermark, ${CONVERSIONS_MARKER_COLUMNS.map((column) => `ADD COLUMN ${column}`).join(', ')}`,
    `ALTER TABLE ${unquoted(names.events)} ADD COLUMN ${EVENTS_MARKER_COLUMNS}`,
    `DELETE FROM ${unquoted(names.version)}`,
  ]
    .map((statement) => `${statement};`)
    .join(' ')
}

/** Layout 1 found: what changed, and the two ways to upgrade. */
function layoutOne(names: SchemaNames): Error {
  return new Error(
    `mysqlStore: the ${names.prefix} tables have layout version 1 (named locks, a mark per event), and this version of @affiliate-webhooks/mysql needs layout ${MYSQL_SCHEMA_VERSION} (one row per conversion: its row lock is the conversion's lock). Stop every process of the older version, then upgrade in place, keeping every watermark: ${upgradeFromOneSql(names)} The next start creates the rest (or run the DDL of affiliate-webhooks sql schema --mysql; the procedures named ${names.prefix}*_v1* may then be dropped). Or drop the tables ${unquoted(names.events)}, ${unquoted(names.conversions)}, ${unquoted(names.streak)} and ${unquoted(names.version)} for a fresh layout ${MYSQL_SCHEMA_VERSION} (events handled before are then forgotten: a redelivery within dedupeTtl runs its handler again).`,
  )
}

/** The store's procedures, unquoted. */
const routines = (names: SchemaNames) =>
  [names.claim, names.settle, names.commit, names.release, names.recordAnswer].map(unquoted)

/** True when every procedure of this version is there (a migration may have left one out). */
async function hasRoutines(run: MysqlRun, names: SchemaNames): Promise<boolean> {
  const wanted = routines(names)
  const rows = await run<{ n: number | bigint }>(
    `SELECT COUNT(*) AS n FROM information_schema.routines WHERE routine_schema = DATABASE() AND routine_type = ? AND routine_name IN (${placeholders(wanted)})`,
    ['PROCEDURE', ...wanted],
  )
  return Number(rows[0]?.n) === wanted.length
}

/**
 * Refuses store tables that exist without a version row but lack this layout's
 * columns: made by an older version or by something else, never used silently.
 * (Tables with every column are kept: DDL is not transactional here, so a setup
 * that stopped half-way leaves tables without the row.)
 */
async function checkExistingTables(run: MysqlRun, names: SchemaNames): Promise<void> {
  const tables = Object.entries(TABLE_COLUMNS).map(([suffix, columns]) => ({
    name: names[suffix as keyof typeof TABLE_COLUMNS].replaceAll('`', ''),
    columns: columns as readonly string[],
  }))
  const found = await run<{ t: string; c: string }>(
    `SELECT table_name AS t, column_name AS c FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name IN (${placeholders(tables)})`,
    tables.map((table) => table.name),
  )
  for (const table of tables) {
    const columns = found.filter((row) => row.t === table.name).map((row) => row.c.toLowerCase())
    if (columns.length === 0) continue
    // The marker's columns alone missing: layout 2's tables, finished below.
    const missing = table.columns.filter(
      (column) => !columns.includes(column) && !MARKER_COLUMN_NAMES.has(column),
    )
    if (missing.length === 0) continue
    throw new Error(
      `mysqlStore: the table ${table.name} exists, with no version row in ${names.version.replaceAll('`', '')}, and lacks the column(s) ${missing.join(', ')}: it was made by an older version of @affiliate-webhooks/mysql or by something else. Migrate or drop it, or use another tablePrefix.`,
    )
  }
}

/** The layout before the claim's marker: upgraded in place by {@link upgradeFromTwo}. */
const LAYOUT_TWO = 2

/**
 * Layout 2 to 3, in place, under the setup's lock: the marker's columns added
 * (NULL: no claim is held), then the version row. Each column is added only
 * if missing (DDL is not transactional: a setup that stopped half-way is
 * finished by the next), and processes of the older version still running
 * keep working meanwhile: their claims leave the marker NULL.
 */
async function upgradeFromTwo(run: MysqlRun, names: SchemaNames): Promise<void> {
  await addMarkerColumns(run, names)
  await run(
    `UPDATE ${names.version} SET version = ${MYSQL_SCHEMA_VERSION} WHERE version = ${LAYOUT_TWO}`,
  )
}

/** The marker's columns, added to each store table that exists without them. */
async function addMarkerColumns(run: MysqlRun, names: SchemaNames): Promise<void> {
  const tables = [
    { name: unquoted(names.events), columns: [EVENTS_MARKER_COLUMNS] },
    { name: unquoted(names.conversions), columns: CONVERSIONS_MARKER_COLUMNS },
  ]
  const found = await run<{ t: string; c: string }>(
    `SELECT table_name AS t, column_name AS c FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name IN (?, ?)`,
    tables.map((table) => table.name),
  )
  for (const table of tables) {
    const has = new Set(
      found.filter((row) => row.t === table.name).map((row) => row.c.toLowerCase()),
    )
    const missing = table.columns.filter((column) => !has.has(column.split(' ')[0] as string))
    if (has.size === 0 || missing.length === 0) continue
    await run(
      `ALTER TABLE \`${table.name}\` ${missing.map((column) => `ADD COLUMN ${column}`).join(', ')}`,
    )
  }
}

/** The names of the marker's columns. */
const MARKER_COLUMN_NAMES = new Set(
  [EVENTS_MARKER_COLUMNS, ...CONVERSIONS_MARKER_COLUMNS].map((column) => column.split(' ')[0]),
)

/** Longest wait for another process creating the same tables, seconds. */
const DDL_LOCK_WAIT_S = 20

/**
 * Creates what is missing, once, under a named lock so processes starting
 * together do not race on CREATE; then checks the version. Tables whose version
 * row matches, with every procedure there, are not touched at all, so an app
 * whose user cannot CREATE runs against tables made by a migration.
 */
export async function ensureSchema(run: MysqlRun, names: SchemaNames): Promise<void> {
  const found = await recordedVersion(run, names)
  const known = (version: number | undefined) =>
    version === undefined || version === MYSQL_SCHEMA_VERSION || version === LAYOUT_TWO
  if (!known(found)) throw wrongVersion(found as number, names)
  if (found === MYSQL_SCHEMA_VERSION && (await hasRoutines(run, names))) return
  const lock = `CONCAT('aw:', SHA1(CONCAT(DATABASE(), '.${names.prefix}:ddl')))`
  const rows = await run<{ got: number | bigint | null }>(
    `SELECT GET_LOCK(${lock}, ${DDL_LOCK_WAIT_S}) AS got`,
  )
  if (Number(rows[0]?.got) !== 1) {
    throw new Error(
      `mysqlStore: another process held the lock on creating the ${names.prefix} tables for ${DDL_LOCK_WAIT_S} s; try again, or create them with \`affiliate-webhooks sql schema --mysql\`.`,
    )
  }
  try {
    await run(versionTableSql(names))
    let now = await recordedVersion(run, names)
    if (!known(now)) throw wrongVersion(now as number, names)
    if (now === LAYOUT_TWO) {
      await upgradeFromTwo(run, names)
      now = MYSQL_SCHEMA_VERSION
    }
    if (now === MYSQL_SCHEMA_VERSION && (await hasRoutines(run, names))) return
    if (now === undefined) {
      await checkExistingTables(run, names)
      await addMarkerColumns(run, names)
    }
    // Every statement is idempotent: run them all when anything is missing.
    for (const statement of schemaStatements(names)) await run(statement)
    await run(versionRowSql(names))
  } finally {
    await run(`DO RELEASE_LOCK(${lock})`)
  }
}

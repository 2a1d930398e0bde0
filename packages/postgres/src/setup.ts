import type { Pool, PoolClient } from 'pg'
import { connectionFailure } from './errors.js'
import {
  POSTGRES_SCHEMA_VERSION,
  type SchemaNames,
  schemaStatements,
  versionTableSql,
} from './schema.js'

/** The version recorded in the version table, or undefined when it has no row yet. */
async function recordedVersion(pool: Pool, names: SchemaNames): Promise<number | undefined> {
  const { rows } = await pool.query<{ version: number }>(
    `SELECT version FROM ${names.version} LIMIT 1`,
  )
  return rows[0]?.version
}

function wrongVersion(found: number, names: SchemaNames): Error {
  return new Error(
    `postgresStore: the table ${names.version} says its tables have layout version ${found}, and this version of @affiliate-webhooks/postgres needs ${POSTGRES_SCHEMA_VERSION}. Migrate them (affiliate-webhooks sql schema --postgres prints this version's DDL), or use another tablePrefix.`,
  )
}

/** Is `code` a missing-table error (the store's tables were never created)? */
const isUndefinedTable = (error: unknown) => (error as { code?: string }).code === '42P01'

/**
 * Creates what is missing, once, under an advisory lock so processes starting
 * together do not race on CREATE; then checks the version. Tables whose version
 * row matches are not touched at all, so an app whose role cannot CREATE runs
 * against tables made by a migration.
 */
export async function ensureSchema(pool: Pool, names: SchemaNames): Promise<void> {
  let found: number | undefined
  try {
    found = await recordedVersion(pool, names)
  } catch (error) {
    if (!isUndefinedTable(error)) throw connectionFailure('postgresStore', pool, error)
  }
  if (found === POSTGRES_SCHEMA_VERSION) return
  if (found !== undefined) throw wrongVersion(found, names)
  let client: PoolClient
  try {
    client = await pool.connect()
  } catch (error) {
    throw connectionFailure('postgresStore', pool, error)
  }
  try {
    await client.query('BEGIN')
    await client.query(`SELECT pg_advisory_xact_lock(${names.lockSpace.ddl}, 0)`)
    await client.query(versionTableSql(names))
    const { rows } = await client.query<{ version: number }>(
      `SELECT version FROM ${names.version} LIMIT 1`,
    )
    const now = rows[0]?.version
    if (now !== undefined && now !== POSTGRES_SCHEMA_VERSION) throw wrongVersion(now, names)
    if (now === undefined) {
      for (const statement of schemaStatements(names)) await client.query(statement)
      await client.query(`INSERT INTO ${names.version} (version) VALUES ($1)`, [
        POSTGRES_SCHEMA_VERSION,
      ])
    }
    await client.query('COMMIT')
    client.release()
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {})
    client.release()
    throw error
  }
}

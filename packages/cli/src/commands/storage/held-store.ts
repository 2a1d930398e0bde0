import type { HoldingStore } from '@affiliate-webhooks/core'
import { UsageError } from '../../framework/io.js'
import { importOptional, MYSQL_PACKAGES, SQLITE_PACKAGES } from '../support/optional-package.js'

/** A store that may hold events, opened from a database's address, and how to let it go. */
export interface OpenedHolding {
  /** The database as lines may name it: never its password. */
  where: string
  /** Undefined for PostgreSQL, which refuses the commit instead of holding the event. */
  store: HoldingStore | undefined
  close(): Promise<void>
}

/** The database as a message may name it: scheme, host and path, no user or password. */
export function describeDatabase(address: string): string {
  try {
    const url = new URL(address)
    if (url.protocol === 'file:') return `SQLite file ${url.pathname}`
    return `${url.protocol.replace(/:$/, '')}://${url.host}${url.pathname}`
  } catch {
    return `SQLite file ${address.replace(/^sqlite:/, '')}`
  }
}

const isUrl = (address: string, schemes: readonly string[]) =>
  schemes.some((scheme) => address.startsWith(`${scheme}://`))

/** A SQLite file through node:sqlite, or better-sqlite3 where this Node has no node:sqlite. */
async function openSqliteFile(file: string): Promise<{ database: unknown; close(): void }> {
  try {
    const { DatabaseSync } = await import('node:sqlite')
    const database = new DatabaseSync(file)
    return { database, close: () => database.close() }
  } catch (error) {
    if ((error as { code?: string }).code !== 'ERR_UNKNOWN_BUILTIN_MODULE') throw error
    const { default: Database } = await importOptional(
      () => import('better-sqlite3'),
      ['better-sqlite3'],
      'a SQLite file on this Node (no node:sqlite)',
    )
    const database = new Database(file)
    return { database, close: () => database.close() }
  }
}

/**
 * Opens the store whose tables live at `address`: mysql:// or mariadb:// (the
 * MySQL store's tables, which Prisma on MariaDB shares), postgres:// (never
 * holds), or a SQLite file (a path, sqlite:path or file:path).
 */
export async function openHolding(address: string, tablePrefix?: string): Promise<OpenedHolding> {
  const where = describeDatabase(address)
  const prefix = tablePrefix === undefined ? {} : { tablePrefix }
  if (isUrl(address, ['postgres', 'postgresql'])) {
    return { where, store: undefined, close: async () => {} }
  }
  if (isUrl(address, ['mysql', 'mariadb'])) {
    const { mysqlStore } = await importOptional(
      () => import('@affiliate-webhooks/mysql'),
      MYSQL_PACKAGES,
      where,
    )
    const mysql = await import('mysql2/promise')
    const pool = mysql.createPool({
      uri: address.replace(/^mariadb:/, 'mysql:'),
      connectionLimit: 2,
    })
    const store = mysqlStore({ pool, logger: false, ...prefix })
    return { where, store, close: () => store.close() }
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(address) && !address.startsWith('file:')) {
    throw new UsageError(
      `--database: a mysql://, mariadb:// or postgres:// URL, or a SQLite file; got a ${address.split(':')[0]}: URL`,
    )
  }
  const file = address.replace(/^(sqlite|file):(\/\/)?/, '')
  const { sqliteStore } = await importOptional(
    () => import('@affiliate-webhooks/sqlite'),
    SQLITE_PACKAGES,
    where,
  )
  const opened = await openSqliteFile(file)
  const store = sqliteStore({
    database: opened.database as Parameters<typeof sqliteStore>[0]['database'],
    ...prefix,
  })
  return { where, store, close: async () => opened.close() }
}

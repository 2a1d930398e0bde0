/**
 * SQLite for tests: a file in a fresh temporary directory (removed at the end),
 * opened with node:sqlite's DatabaseSync or better-sqlite3, in WAL mode.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { SqliteDatabase } from '@affiliate-webhooks/sqlite'
import BetterSqlite3 from 'better-sqlite3'

// node:sqlite by require: the repository's @types/node (20) has no types for it yet.
const { DatabaseSync } = createRequire(import.meta.url)('node:sqlite') as {
  DatabaseSync: new (file: string) => SqliteDatabase & { close(): void }
}

export type SqliteLibrary = 'node:sqlite' | 'better-sqlite3'
export const SQLITE_LIBRARIES: readonly SqliteLibrary[] = ['node:sqlite', 'better-sqlite3']

/** Opens `file` with `library`, WAL mode (or `journal`), the app's own busy timeout at 5 s. */
export function openSqlite(
  library: SqliteLibrary,
  file: string,
  journal: 'WAL' | 'DELETE' = 'WAL',
): SqliteDatabase & { close(): void } {
  const db = library === 'node:sqlite' ? new DatabaseSync(file) : new BetterSqlite3(file)
  db.exec(`PRAGMA journal_mode = ${journal}`)
  db.exec('PRAGMA busy_timeout = 5000')
  return db as unknown as SqliteDatabase & { close(): void }
}

export interface SqliteTestFile {
  file: string
  drop(): void
}

/** A new file in a directory of its own. */
export function createSqliteTestFile(): SqliteTestFile {
  const dir = mkdtempSync(join(tmpdir(), 'aw-sqlite-'))
  return { file: join(dir, 'app.db'), drop: () => rmSync(dir, { recursive: true, force: true }) }
}

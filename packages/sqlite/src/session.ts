/**
 * The connection's settings a handler may change with a PRAGMA through ctx.tx.
 * They are not part of the transaction: without this they would outlive the
 * delivery (a `query_only = ON` made every later claim fail until a restart).
 * Read once, before the first call of a delivery that may change one, and put
 * back when the delivery ends.
 */
import type { SqliteDatabase } from './database.js'

/**
 * Each setting that changes how the store's statements or commit behave, or
 * what the next delivery's handler meets. `synchronous` is the durability of
 * the commit a 2xx acknowledges; `query_only` and `locking_mode` decide
 * whether the store (and other processes on the file) can write at all.
 */
const SESSION_PRAGMAS = [
  'query_only',
  'synchronous',
  'journal_mode',
  'locking_mode',
  'busy_timeout',
  'foreign_keys',
  'recursive_triggers',
  'writable_schema',
  'ignore_check_constraints',
  'trusted_schema',
  'cell_size_check',
  'reverse_unordered_selects',
  'automatic_index',
  'temp_store',
  'secure_delete',
  'cache_size',
  'cache_spill',
  'wal_autocheckpoint',
  'legacy_alter_table',
] as const

export type Session = Map<string, unknown>

/** The value of each setting now. One a build of SQLite does not have is left out. */
export function sessionOf(db: SqliteDatabase): Session {
  const saved: Session = new Map()
  for (const name of SESSION_PRAGMAS) {
    try {
      const row = db.prepare(`PRAGMA ${name}`).get() as Record<string, unknown> | undefined
      if (row !== undefined) saved.set(name, Object.values(row)[0])
    } catch {
      // Not in this build of SQLite: nothing a handler can change either.
    }
  }
  return saved
}

/**
 * Puts back each setting of `saved` (or only `only`) that differs now, and
 * says which it put back and which it could not. `synchronous`,
 * `journal_mode` and `foreign_keys` change only outside a transaction: call
 * it after the COMMIT or ROLLBACK for those.
 */
export function restoreSession(
  db: SqliteDatabase,
  saved: Session,
  only?: readonly string[],
): { reset: string[]; failed: string[] } {
  const reset: string[] = []
  const failed: string[] = []
  for (const [name, value] of saved) {
    if (only !== undefined && !only.includes(name)) continue
    try {
      const row = db.prepare(`PRAGMA ${name}`).get() as Record<string, unknown> | undefined
      if (row === undefined || Object.values(row)[0] === value) continue
      const literal = typeof value === 'number' ? String(value) : `'${String(value)}'`
      db.exec(`PRAGMA ${name} = ${literal}`)
      reset.push(`${name} = ${String(value)}`)
    } catch {
      failed.push(name)
    }
  }
  return { reset, failed }
}

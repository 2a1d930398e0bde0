/**
 * What the store needs of a SQLite connection, as node:sqlite's `DatabaseSync`
 * and better-sqlite3's `Database` both have it: `exec`, and `prepare` whose
 * statements `run`, `get` and `all` with positional parameters. Neither library
 * is imported: the app passes the connection it already has.
 */

/** A prepared statement, as both libraries have it. */
export interface SqliteStatement {
  /** Runs it for its changes (an INSERT, UPDATE or DELETE). */
  run(...params: unknown[]): unknown
  /** Its first row, or undefined. */
  get(...params: unknown[]): unknown
  /** All its rows. */
  all(...params: unknown[]): unknown[]
}

/** A node:sqlite `DatabaseSync` or a better-sqlite3 `Database`. */
export interface SqliteDatabase {
  /** Runs statements without parameters (the store's BEGIN IMMEDIATE, COMMIT, ROLLBACK and PRAGMAs). */
  exec(sql: string): unknown
  /** A prepared statement with positional `?` parameters. */
  prepare(sql: string): SqliteStatement
}

/** Whether a transaction is open on the connection (`isTransaction` in node:sqlite, `inTransaction` in better-sqlite3). */
export function inTransaction(database: SqliteDatabase): boolean {
  const db = database as { isTransaction?: boolean; inTransaction?: boolean }
  return Boolean(db.isTransaction ?? db.inTransaction)
}

/** Whether the connection is open (`isOpen` in node:sqlite, `open` in better-sqlite3). */
export function isOpen(database: SqliteDatabase): boolean {
  const db = database as { isOpen?: boolean; open?: boolean }
  return Boolean(db.isOpen ?? db.open)
}

/** The file behind the connection, for messages: `location()` (node:sqlite) or `name` (better-sqlite3). */
export function fileOf(database: SqliteDatabase): string {
  const db = database as { location?: () => string | null; name?: string }
  const at = typeof db.location === 'function' ? db.location() : db.name
  return at === null || at === undefined || at === '' ? 'an in-memory database' : at
}

/** SQLITE_BUSY (another connection holds the write lock), from either library. */
export function isBusy(error: unknown): boolean {
  const e = error as { code?: unknown; errcode?: unknown }
  return e?.code === 'SQLITE_BUSY' || (typeof e?.errcode === 'number' && (e.errcode & 0xff) === 5)
}

/** Checks the option once: a connection of either library, open. */
export function checkDatabase(database: unknown): SqliteDatabase {
  const db = database as Partial<SqliteDatabase> | undefined
  if (
    db === undefined ||
    db === null ||
    typeof db.exec !== 'function' ||
    typeof db.prepare !== 'function'
  ) {
    throw new TypeError(
      "sqliteStore: `database` must be a node:sqlite DatabaseSync or a better-sqlite3 Database: sqliteStore({ database: new DatabaseSync('app.db') })",
    )
  }
  if (!isOpen(db as SqliteDatabase)) {
    throw new TypeError('sqliteStore: the database given is closed; open it first')
  }
  return db as SqliteDatabase
}

/** Statements prepared once per connection and text. */
export function statementCache(database: SqliteDatabase): (sql: string) => SqliteStatement {
  const cache = new Map<string, SqliteStatement>()
  return (sql) => {
    let statement = cache.get(sql)
    if (statement === undefined) {
      statement = database.prepare(sql)
      cache.set(sql, statement)
    }
    return statement
  }
}

/**
 * ctx.tx: the database itself while the claim holds, and an error for any use
 * once it is over (lease, commit, release): the connection goes on to the next
 * delivery, and a late statement would otherwise land in its transaction.
 * Statements prepared through it are guarded the same way.
 */
export function guarded<D extends SqliteDatabase>(database: D, over: () => boolean): D {
  const check = () => {
    if (over()) {
      throw new Error(
        "sqliteStore: this delivery's transaction is over (committed, rolled back, or past its lease): ctx.tx takes no more statements",
      )
    }
  }
  const wrap = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(object, key) {
        const value = Reflect.get(object, key, object)
        if (typeof value !== 'function') return value
        return (...args: unknown[]) => {
          check()
          const result = Reflect.apply(value, object, args)
          return key === 'prepare' && typeof result === 'object' && result !== null
            ? wrap(result)
            : result
        }
      },
    })
  return wrap(database)
}

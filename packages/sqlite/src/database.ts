/**
 * What the store needs of a SQLite connection, as node:sqlite's `DatabaseSync`
 * and better-sqlite3's `Database` both have it: `exec`, and `prepare` whose
 * statements `run`, `get` and `all` with positional parameters. Neither library
 * is imported: the app passes the connection it already has.
 */
import {
  refusedStatement,
  transactionControl,
  transactionGone,
  transactionOver,
} from '@affiliate-webhooks/core/internal'

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

/** What ctx.tx watches of its claim: read and written by the guard and the store. */
export interface TxWatch {
  /** The store ended the claim (committed, rolled back, or past its lease). */
  over: boolean
  /**
   * Why the transaction ended under the handler while the claim held (the
   * error of the statement that ended it, or what was seen): ctx.tx refuses
   * from then on, and the store's commit answers 500 with it.
   */
  gone: Error | undefined
  /** The text whose run ended the transaction, when ctx.tx saw it end there. */
  endedBy?: string | undefined
  /**
   * Called once before the first call of a delivery that may change the
   * connection's settings (a text with a PRAGMA, better-sqlite3's pragma()):
   * the store keeps what to put back when the delivery ends.
   */
  beforeSession?: (() => void) | undefined
  /** Whether the claim's mark is committed now (the transaction was ended by a COMMIT): then it was kept. */
  markKept?: (() => boolean) | undefined
}

const STORE = 'sqliteStore'

/** Why the transaction ended, from what the statement that ended it threw (if it threw). */
function goneCause(thrown: unknown): Error {
  if (thrown instanceof Error) {
    return Object.assign(
      new Error(
        `a statement's failure rolled back the whole transaction (${thrown.message}): SQLite does that for an OR ROLLBACK or ON CONFLICT ROLLBACK conflict clause and a trigger's RAISE(ROLLBACK); use ABORT or FAIL, or a savepoint, for a statement that may fail`,
      ),
      { cause: thrown },
    )
  }
  return new Error('a statement sent through ctx.tx ended it')
}

/** The SQL text of a call's first argument (a string, or a tag's strings). */
function textOf(sql: unknown): string | undefined {
  return typeof sql === 'string' ? sql : Array.isArray(sql) ? sql.join('?') : undefined
}

/** A `transactionControl` check of each SQL text ctx.tx is given, before it reaches SQLite. */
function refuseControl(text: string | undefined): void {
  if (text === undefined) return
  const statement = transactionControl(text, 'sqlite')
  if (statement !== undefined) throw refusedStatement(STORE, statement)
}

/**
 * Whether a call may change the connection's settings. The word is looked for
 * anywhere in the text, not parsed: a PRAGMA cannot be written without it, so
 * nothing hides from this (a read of a pragma function costs a needless check).
 */
function touchesSession(name: string, text: string | undefined): boolean {
  return name === 'pragma' || (text !== undefined && /pragma/i.test(text))
}

/** Methods that change the connection for every later delivery, refused on ctx.tx. */
const CONNECTION_WIDE = new Set([
  'close',
  'setAuthorizer',
  'deserialize',
  'loadExtension',
  'enableLoadExtension',
  'unsafeMode',
])

/** The text of a prepared statement, from either library, for messages. */
function sourceOf(statement: object): string | undefined {
  const s = statement as { source?: unknown; sourceSQL?: unknown }
  const text = s.sourceSQL ?? s.source
  return typeof text === 'string' ? text : undefined
}

/** ctx.tx's refusal once the transaction is gone: what was kept depends on how it ended. */
function goneError(watch: TxWatch): Error {
  if (watch.markKept?.() !== true) return transactionGone(STORE, watch.gone?.message ?? '')
  // Committed, so the cause goneCause guessed (a rollback) is not what happened.
  const by = watch.endedBy === undefined ? 'a COMMIT outside ctx.tx' : 'a text sent through ctx.tx'
  return Object.assign(
    new Error(
      `${STORE}: the delivery's transaction was committed by ${by}, not by the store: the handled mark and what the handler wrote before that statement were kept, nothing after it is. ctx.tx takes no more statements; the event is held (answered 500 event_held) until it is resolved (resolveHeld).`,
    ),
    { code: 'ERR_AW_TX_GONE' },
  )
}

type Run = <T>(call: () => T, text?: string) => T

/**
 * Runs each call of ctx.tx after checking the claim still holds its
 * transaction, and checks again after it: a statement that ended the
 * transaction makes the next fail at once, whatever runs in between on the
 * outer handle (a BEGIN there would make the connection look fine again).
 */
function runner(database: SqliteDatabase, watch: TxWatch): Run {
  const db = database as { isTransaction?: boolean; inTransaction?: boolean }
  // Property reads on the hot path: which one, decided once.
  const live: () => boolean =
    'isTransaction' in db ? () => db.isTransaction === true : () => db.inTransaction === true
  const before = () => {
    if (watch.over) {
      throw transactionOver('sqliteStore')
    }
    if (watch.gone === undefined && !live()) {
      watch.gone = new Error(
        'it was ended outside ctx.tx (a COMMIT or ROLLBACK on the database handle itself)',
      )
    }
    if (watch.gone !== undefined) throw goneError(watch)
  }
  return (call, text) => {
    before()
    let thrown: unknown
    try {
      return call()
    } catch (error) {
      thrown = error
      throw error
    } finally {
      if (!watch.over && watch.gone === undefined && !live()) {
        watch.gone = goneCause(thrown)
        watch.endedBy = text
      }
    }
  }
}

/**
 * better-sqlite3's `db.transaction(fn)` result, each of its variants run the
 * same way. (Its properties cannot be proxied: they are read-only and
 * non-configurable, so a Proxy must return them unchanged.)
 */
function transactionFunction(fn: (...args: unknown[]) => unknown, self: unknown, run: Run) {
  const guard =
    (each: (...args: unknown[]) => unknown) =>
    (...args: unknown[]) =>
      run(() => Reflect.apply(each, undefined, args))
  const wrapped = guard(fn)
  const variants = fn as unknown as Record<string, (...args: unknown[]) => unknown>
  for (const variant of ['default', 'deferred', 'immediate', 'exclusive']) {
    const each = variants[variant]
    if (typeof each === 'function') Object.defineProperty(wrapped, variant, { value: guard(each) })
  }
  Object.defineProperty(wrapped, 'database', { value: self })
  return wrapped
}

/** What a call returns that runs statements later: guarded the same way. */
type Kind = 'database' | 'statement' | 'tags'
const RESULT_KIND: Record<string, Kind | 'transaction'> = {
  prepare: 'statement',
  createTagStore: 'tags',
  transaction: 'transaction',
}

/**
 * ctx.tx: the database itself while the claim holds, and an error for any use
 * once it is over (lease, commit, release): the connection goes on to the next
 * delivery, and a late statement would otherwise land in its transaction.
 * Statements prepared through it (and node:sqlite tag stores, better-sqlite3
 * transaction functions) are guarded the same way. Two more refusals, for a
 * handler's mistakes: a text that would end the transaction (BEGIN, COMMIT,
 * ROLLBACK, END...: savepoints are fine) and close() are refused before SQLite
 * sees them; and once the transaction is gone under the claim (a conflict
 * clause rolled it back), every statement is refused, so nothing autocommits
 * on its own, even if a transaction is begun again outside ctx.tx.
 */
export function guarded<D extends SqliteDatabase>(database: D, watch: TxWatch): D {
  const run = runner(database, watch)
  const wrap = <T extends object>(target: T, kind: Kind): T => {
    const proxy: T = new Proxy(target, {
      get(object, key) {
        const value = Reflect.get(object, key, object)
        if (typeof value !== 'function') return value
        const name = String(key)
        return (...args: unknown[]) => {
          let text: string | undefined
          if (kind !== 'statement') {
            if (kind === 'tags' || name === 'exec' || name === 'prepare') {
              text = textOf(args[0])
              refuseControl(text)
            }
            if (kind === 'database' && CONNECTION_WIDE.has(name)) {
              throw refusedStatement(STORE, `${name}()`)
            }
            if (name === 'pragma') text = `PRAGMA ${String(args[0])}`
            if (!watch.over && touchesSession(name, text)) {
              watch.beforeSession?.()
              watch.beforeSession = undefined
            }
          } else text = sourceOf(object)
          const result = run(() => Reflect.apply(value, object, args), text)
          // better-sqlite3's bind(), pluck(), raw()... return the statement itself.
          if (result === object) return proxy
          const next = kind === 'database' ? RESULT_KIND[name] : undefined
          if (next === undefined || result === null) return result
          if (next === 'transaction') {
            return typeof result === 'function'
              ? transactionFunction(result as (...args: unknown[]) => unknown, proxy, run)
              : result
          }
          return typeof result === 'object' ? wrap(result, next) : result
        }
      },
    })
    return proxy
  }
  return wrap(database, 'database')
}

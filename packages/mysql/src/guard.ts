/**
 * ctx.tx on mysql2: the delivery's PoolConnection behind a guard. MySQL
 * commits implicitly before DDL, `LOCK TABLES`, `START TRANSACTION` and more:
 * such a statement would commit the claim's mark and free the conversion's
 * row while the handler still runs, so a copy is answered `duplicate` and a
 * newer event of the conversion is claimed meanwhile. The guard refuses it
 * before it reaches the server. InnoDB rolls back the whole transaction on a
 * deadlock (1213), and on a lock wait timeout (1205) when the server runs with
 * innodb_rollback_on_timeout: once ctx.tx has seen one, every later statement
 * fails at once, so a handler that catches it and retries writes nothing more.
 * Still a PoolConnection (instanceof, `escape`, `format`) for the user's tools.
 */
import {
  refusedStatement,
  transactionControl,
  transactionGone,
  transactionOver,
} from '@affiliate-webhooks/core/internal'
import type { PoolConnection } from 'mysql2/promise'

const STORE = 'mysqlStore'

/** What the guard knows of the claim's transaction. */
export interface GuardState {
  /** Committed, released, or past its lease: ctx.tx takes nothing more. */
  over: boolean
  /** Why the server ended the transaction under the handler (a deadlock, or a rolled back lock wait, it saw), if it did. */
  gone: Error | undefined
  /** The handler's statements sent and not yet answered: the store's CALL would queue behind them. */
  running: number
  /** The server rolls back the whole transaction on a lock wait timeout too (innodb_rollback_on_timeout). */
  rollbackOnTimeout: boolean
  /**
   * The claim's transaction ended under a statement of the handler, as the
   * server's status flags said after it (or a write refused as read only after
   * it): the statement's text when ctx.tx saw it.
   */
  escaped: { statement: string | undefined } | undefined
  /** A statement of the handler changed the session's state (a SET, a user variable): the connection is not handed on. */
  sessionChanged: boolean
}

/** SERVER_STATUS_IN_TRANS: a transaction is open. */
const IN_TRANS = 0x1
/** SERVER_STATUS_AUTOCOMMIT: the claim turned it off; on again, the claim's transaction was committed. */
const AUTOCOMMIT = 0x2
/** SERVER_STATUS_IN_TRANS_READONLY: a read-only transaction, never the claim's (READ WRITE). */
const IN_TRANS_READONLY = 0x2000
/** SERVER_SESSION_STATE_CHANGED (the claim turns session_track_state_change on). */
const SESSION_STATE_CHANGED = 0x4000
/** ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION: a write after the claim's transaction ended. */
export const ER_READ_ONLY_TRANSACTION = 1792

/**
 * The server status of a statement's last OK packet: a ResultSetHeader, or
 * the last result of a CALL or multi-statement text. A text whose last result
 * is rows ends in an EOF packet, whose flags mysql2 reads and does not keep:
 * undefined then (a single SELECT cannot end a transaction: a function that
 * commits is refused by the server, and the store's commit checks the rest).
 */
export function serverStatusOf(result: unknown): number | undefined {
  const rows = Array.isArray(result) ? result[0] : undefined
  const last = Array.isArray(rows) ? rows.at(-1) : rows
  const status = (last as { serverStatus?: unknown } | null | undefined)?.serverStatus
  return typeof status === 'number' ? status : undefined
}

/** Notes what the statement's status says: the claim's transaction gone, or the session changed. */
function noteStatus(state: GuardState, status: number | undefined, text: string | undefined): void {
  if (status === undefined) return
  if ((status & SESSION_STATE_CHANGED) !== 0) state.sessionChanged = true
  const ended =
    (status & IN_TRANS) === 0 || (status & IN_TRANS_READONLY) !== 0 || (status & AUTOCOMMIT) !== 0
  if (ended && state.escaped === undefined) state.escaped = { statement: text }
}

/** A statement's text as messages quote it: one line, at most 200 characters. */
export function quoted(text: string | undefined): string {
  if (text === undefined) return 'a statement ctx.tx could not read'
  const line = text.replace(/\s+/g, ' ').trim()
  return `\`${line.length > 200 ? `${line.slice(0, 200)}...` : line}\``
}

/** InnoDB's deadlock: the whole transaction was rolled back, not just the statement. */
export const ER_LOCK_DEADLOCK = 1213
/** A lock wait timeout: the statement rolled back, or the whole transaction under innodb_rollback_on_timeout. */
export const ER_LOCK_WAIT_TIMEOUT = 1205

const errnoOf = (error: unknown) => (error as { errno?: unknown } | null)?.errno

/** Whether `error` on ctx.tx means InnoDB rolled back the whole transaction. */
function endsTransaction(state: GuardState, error: unknown): boolean {
  const errno = errnoOf(error)
  return errno === ER_LOCK_DEADLOCK || (errno === ER_LOCK_WAIT_TIMEOUT && state.rollbackOnTimeout)
}

/** The text of a query's first argument: a string, or `{ sql }`. */
function textOf(options: unknown): string | undefined {
  if (typeof options === 'string') return options
  const sql = (options as { sql?: unknown } | null)?.sql
  return typeof sql === 'string' ? sql : undefined
}

/** Why nothing may be sent now, or why this text may not: undefined when it may go. */
function refusal(state: GuardState, text: string | undefined): Error | undefined {
  if (state.over) return transactionOver(STORE)
  if (state.gone !== undefined) {
    return transactionGone(STORE, `InnoDB rolled it back: ${state.gone.message}`)
  }
  if (state.escaped !== undefined) {
    return transactionGone(
      STORE,
      `the handler's statement ${quoted(state.escaped.statement)} ended it (the server's status said so after it)`,
    )
  }
  const statement = text === undefined ? undefined : transactionControl(text, 'mysql')
  return statement === undefined ? undefined : refusedStatement(STORE, statement)
}

/**
 * Runs a statement, counting it while it runs; after it, reads the server's
 * status flags (the transaction ended, the session changed), and notes an
 * error that rolled the transaction back or that shows it ended before.
 */
async function watched<T>(
  state: GuardState,
  text: string | undefined,
  run: () => Promise<T>,
): Promise<T> {
  state.running++
  try {
    const result = await run()
    noteStatus(state, serverStatusOf(result), text)
    return result
  } catch (error) {
    if (endsTransaction(state, error) && state.gone === undefined) {
      state.gone = error as Error
    }
    // Read only: the claim's READ WRITE transaction is over, by an earlier statement.
    if (errnoOf(error) === ER_READ_ONLY_TRANSACTION && state.escaped === undefined) {
      state.escaped = { statement: undefined }
    }
    throw error
  } finally {
    state.running--
  }
}

/** Methods that would end the claim's transaction or hand its connection to someone else, by what they return. */
const REFUSED_ASYNC: Record<string, string> = {
  beginTransaction: 'beginTransaction() (START TRANSACTION commits the claim first)',
  commit: 'commit()',
  rollback: 'rollback()',
  changeUser: 'changeUser() (it ends the session)',
  end: 'end()',
}
const REFUSED_SYNC: Record<string, string> = {
  release: "release() (the store's connection goes back to the pool when it commits or rolls back)",
  destroy: 'destroy()',
}

/** A statement prepared through ctx.tx: executed only while the claim holds. */
function guardedPrepared<P extends object>(prepared: P, state: GuardState): P {
  return new Proxy(prepared, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver)
      if (key !== 'execute' || typeof value !== 'function') return value
      return (...args: unknown[]) => {
        const refused = refusal(state, undefined)
        if (refused !== undefined) return Promise.reject(refused)
        return watched(
          state,
          undefined,
          () => Reflect.apply(value, target, args) as Promise<unknown>,
        )
      }
    },
  })
}

/**
 * `ctx.tx.connection`: mysql2's callback connection under the promise one,
 * with the same refusals in callback form (the error to the callback, or
 * thrown without one), and no `promise()` (an unguarded wrapper). A statement
 * that MySQL commits implicitly would otherwise free the conversion's row
 * while the handler still runs.
 */
function guardedCallbacks<C extends object>(raw: C, state: GuardState): C {
  const refuse = (args: unknown[], error: Error) => {
    const callback = args.findLast((arg) => typeof arg === 'function') as
      | ((error: Error) => void)
      | undefined
    if (callback === undefined) throw error
    process.nextTick(callback, error)
    return undefined
  }
  const checked =
    (method: string) =>
    (...args: unknown[]) => {
      const text = textOf(args[0])
      const refused = refusal(state, text)
      if (refused !== undefined) return refuse(args, refused)
      // The callback API does not always hand over the OK packet (a query
      // object, a stream): the connection is not given to anyone else after
      // it, whatever it changed; where a callback gets the status, it is read.
      state.sessionChanged = true
      const at = args.findLastIndex((arg) => typeof arg === 'function')
      if (at !== -1) {
        const callback = args[at] as (error: unknown, result?: unknown, ...rest: unknown[]) => void
        args[at] = (error: unknown, result?: unknown, ...rest: unknown[]) => {
          if (error === null || error === undefined)
            noteStatus(state, serverStatusOf([result]), text)
          else if (errnoOf(error) === ER_READ_ONLY_TRANSACTION && state.escaped === undefined) {
            state.escaped = { statement: text }
          }
          callback(error, result, ...rest)
        }
      }
      return Reflect.apply(Reflect.get(raw, method) as (...a: unknown[]) => unknown, raw, args)
    }
  const guarded: Record<string, unknown> = {
    query: checked('query'),
    execute: checked('execute'),
    prepare: checked('prepare'),
  }
  for (const [method, what] of Object.entries({ ...REFUSED_ASYNC, ...REFUSED_SYNC })) {
    guarded[method] = (...args: unknown[]) =>
      refuse(args, refusedStatement(STORE, `ctx.tx.connection.${what}`))
  }
  guarded.promise = () => {
    throw refusedStatement(STORE, 'ctx.tx.connection.promise() (use ctx.tx itself)')
  }
  return new Proxy(raw, {
    get(target, key, receiver) {
      if (typeof key === 'string' && Object.hasOwn(guarded, key)) return guarded[key]
      return Reflect.get(target, key, receiver)
    },
  })
}

/** ctx.tx: `connection` whose statements are checked first, and whose transaction is the store's alone. */
export function guardedConnection(connection: PoolConnection, state: GuardState): PoolConnection {
  const send =
    (method: 'query' | 'execute') =>
    (...args: unknown[]) => {
      const text = textOf(args[0])
      const refused = refusal(state, text)
      if (refused !== undefined) return Promise.reject(refused)
      return watched(state, text, () => Reflect.apply(connection[method], connection, args))
    }
  const guarded: Record<string, unknown> = {
    query: send('query'),
    execute: send('execute'),
    prepare: async (...args: unknown[]) => {
      const refused = refusal(state, textOf(args[0]))
      if (refused !== undefined) throw refused
      const prepared = await Reflect.apply(connection.prepare, connection, args)
      return guardedPrepared(prepared as object, state)
    },
  }
  for (const [method, what] of Object.entries(REFUSED_ASYNC)) {
    guarded[method] = () => Promise.reject(refusedStatement(STORE, `ctx.tx.${what}`))
  }
  for (const [method, what] of Object.entries(REFUSED_SYNC)) {
    guarded[method] = () => {
      throw refusedStatement(STORE, `ctx.tx.${what}`)
    }
  }
  guarded.connection = guardedCallbacks(connection.connection, state)
  return new Proxy(connection, {
    get(target, key, receiver) {
      if (typeof key === 'string' && Object.hasOwn(guarded, key)) return guarded[key]
      return Reflect.get(target, key, receiver)
    },
  })
}

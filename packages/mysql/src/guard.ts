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
  const statement = text === undefined ? undefined : transactionControl(text, 'mysql')
  return statement === undefined ? undefined : refusedStatement(STORE, statement)
}

/** Runs a statement, noting an error that rolled the transaction back (after it the transaction is gone) and counting it while it runs. */
async function watched<T>(state: GuardState, run: () => Promise<T>): Promise<T> {
  state.running++
  try {
    return await run()
  } catch (error) {
    if (endsTransaction(state, error) && state.gone === undefined) {
      state.gone = error as Error
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
        return watched(state, () => Reflect.apply(value, target, args) as Promise<unknown>)
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
      const statement = text === undefined ? undefined : transactionControl(text, 'mysql')
      if (state.over) return refuse(args, transactionOver(STORE))
      if (statement !== undefined) return refuse(args, refusedStatement(STORE, statement))
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
      const refused = refusal(state, textOf(args[0]))
      if (refused !== undefined) return Promise.reject(refused)
      return watched(state, () => Reflect.apply(connection[method], connection, args))
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

/**
 * ctx.tx on postgres.js: the delivery's reserved connection, behind a guard
 * that refuses, before it is sent, any statement that would end or split the
 * delivery's transaction, and any query once the claim is over.
 */
import { readFile } from 'node:fs'
import {
  refusedStatement,
  transactionControl,
  transactionGone,
  transactionOver,
} from '@affiliate-webhooks/core/internal'
import type { ReservedSql, Sql, TransactionSql } from 'postgres'

const STORE = 'postgresStore'

// biome-ignore lint/suspicious/noExplicitAny: postgres.js types are generic in the app's custom types.
type AnySql = Sql<any>
// biome-ignore lint/suspicious/noExplicitAny: as above.
type Reserved = ReservedSql<any>
// biome-ignore lint/suspicious/noExplicitAny: as above.
type Transaction = TransactionSql<any>

/** What the guard reads of a claim: whether ctx.tx still takes queries. */
export interface GuardState {
  /** Settled by commit or release, or past its lease: ctx.tx refuses every query. */
  over: () => boolean
  /** Why the reserved connection closed under the claim, if it did: ctx.tx refuses every query. */
  closed: () => Error | undefined
  /** Savepoints named so far (s0, s1, ...), as postgres.js names them. */
  savepoints: number
  /** Why the transaction ended under the handler, once the guard saw it. */
  gone: () => string | undefined
  /** The transaction ended under the handler: every later query is refused. */
  onGone: (why: string) => void
}

/** What the guard needs of a postgres.js Query (a lazy promise): its text and the function that sends it. */
interface QueryLike {
  strings: readonly string[]
  args: unknown[]
  options: { simple?: boolean }
  streaming?: boolean
  handler: ((query: QueryLike) => unknown) & { debug?: unknown }
  reject: (error: unknown) => void
}

const isQuery = (value: unknown): value is QueryLike =>
  typeof value === 'object' &&
  value !== null &&
  Array.isArray((value as QueryLike).strings) &&
  typeof (value as QueryLike).handler === 'function'

/**
 * The query's text as the server will get it, fragments (`${tx.unsafe('...')}`)
 * included; a parameter is a placeholder, which can never start a statement.
 */
function textOf(query: QueryLike): string {
  let text = query.strings[0] ?? ''
  for (let i = 1; i < query.strings.length; i++) {
    const arg = query.args[i - 1]
    const part = isQuery(arg)
      ? textOf(arg)
      : Array.isArray(arg) && isQuery(arg[0])
        ? arg.map((each) => textOf(each as QueryLike)).join(' ')
        : '$1'
    text += ` ${part} ${query.strings[i]}`
  }
  return text
}

/** The connection under the claim closed: the server rolled its transaction back. */
const connectionClosed = (cause: Error) =>
  transactionGone(STORE, `the connection to the database closed: ${cause.message}`)

/** Why a query may not go out now, or undefined. */
function refusal(state: GuardState, query: QueryLike): Error | undefined {
  if (state.over()) return transactionOver(STORE)
  const closed = state.closed()
  if (closed !== undefined) return connectionClosed(closed)
  const gone = state.gone()
  if (gone !== undefined) return transactionGone(STORE, gone)
  const statement = transactionControl(textOf(query), 'postgres')
  return statement === undefined ? undefined : refusedStatement(STORE, statement)
}

/**
 * SQLSTATEs that tell the claim's transaction is gone: the guard trigger
 * refused a COMMIT of the handler's (the server rolled the whole attempt
 * back), or a write ran outside the claim's transaction, in the read-only
 * session the store leaves around it (a COMMIT or ROLLBACK got past the
 * checks). postgres.js does not keep ReadyForQuery's status; the server's
 * answers say it instead.
 */
const GONE_CODES: Record<string, string> = {
  AWESC: 'a COMMIT the server refused, the whole attempt rolled back',
  '25006': 'a write outside the claim: the transaction had ended before it',
}

/** A statement's text as a message may show it: its start only. */
const clip = (text: string) =>
  `"${text.trim().replace(/\s+/g, ' ').slice(0, 60)}${text.length > 60 ? '…' : ''}"`

/** Watches a sent query's answer for a sign that the transaction is gone. */
function watchAnswer(state: GuardState, query: QueryLike): void {
  Promise.prototype.then.call(query, undefined, (error: unknown) => {
    const code = (error as { code?: unknown } | null)?.code
    const why = typeof code === 'string' ? GONE_CODES[code] : undefined
    if (why !== undefined && state.gone() === undefined) {
      state.onGone(`${clip(textOf(query))} failed: ${why}`)
    }
  })
}

/**
 * Checks the query when it is sent (a postgres.js query is lazy: it goes out
 * when awaited): refused, it rejects without reaching the connection, so a
 * handler may catch the error and go on in an intact transaction.
 */
function guardQuery<Q>(state: GuardState, made: Q, read?: (done: (text: string) => void) => void) {
  if (!isQuery(made)) return made
  const send = made.handler
  const checked = (query: QueryLike) => {
    const refused = refusal(state, query)
    if (refused !== undefined) return query.reject(refused)
    // One statement per query, as the server enforces it in the extended
    // protocol: a text's statements after a hidden ROLLBACK would otherwise
    // run, and commit on their own, before any answer told the guard. (COPY's
    // streams need the simple protocol: they carry no statement list.)
    if (!query.streaming) query.options.simple = false
    const sent = send(query)
    watchAnswer(state, query)
    return sent
  }
  const handler: QueryLike['handler'] =
    read === undefined
      ? checked
      : (query) =>
          read((text) => {
            query.strings = [text]
            checked(query)
          })
  handler.debug = send.debug
  made.handler = handler
  return made
}

/** `.file(path, args?, options?)` as postgres.js has it, its text read first so the guard can see it. */
function guardedFile(conn: Reserved, state: GuardState) {
  return (path: string, ...rest: unknown[]) => {
    const [args = [], options = {}] = (
      rest.length === 1 && !Array.isArray(rest[0]) ? [[], rest[0]] : rest
    ) as [unknown[], Record<string, unknown>]
    const simple = 'simple' in options ? options.simple : args.length === 0
    const query = conn.unsafe('', args as never[], { prepare: true, ...options, simple } as never)
    return guardQuery(state, query, (done) =>
      readFile(path, 'utf8', (error, text) =>
        error === null ? done(text) : (query as unknown as QueryLike).reject(error),
      ),
    )
  }
}

/**
 * `tx.savepoint([name,] fn)` as postgres.js has it in `sql.begin`: a savepoint,
 * rolled back to when `fn` throws. Left open when it resolves (as postgres.js
 * leaves it): it commits with the transaction.
 */
function savepointOf(tx: () => Transaction, state: GuardState) {
  return async (nameOrFn: unknown, fn?: unknown): Promise<unknown> => {
    const body = (typeof nameOrFn === 'function' ? nameOrFn : fn) as (sql: Transaction) => unknown
    const suffix = typeof nameOrFn === 'string' ? `_${nameOrFn.replace(/[^a-z0-9_]/gi, '')}` : ''
    const name = `"s${state.savepoints++}${suffix}"`
    await tx().unsafe(`SAVEPOINT ${name}`)
    try {
      const made = body(tx())
      return await (Array.isArray(made) ? Promise.all(made) : made)
    } catch (error) {
      await tx().unsafe(`ROLLBACK TO SAVEPOINT ${name}`)
      throw error
    }
  }
}

/** What a handler may not call on ctx.tx: each would end the transaction or hand the connection on. */
const REFUSED_METHODS: Record<string, string> = {
  begin: 'ctx.tx.begin() (a transaction of its own)',
  reserve: 'ctx.tx.reserve() (a connection of its own)',
  release: "ctx.tx.release() (the store's connection goes back to the pool at commit)",
  prepare: 'ctx.tx.prepare() (PREPARE TRANSACTION)',
}

/**
 * ctx.tx: the reserved connection with the transaction's API (`savepoint`, and
 * the instance's `options`, which a query builder reads: drizzle(ctx.tx)).
 */
export function guardedTransaction(
  conn: Reserved,
  state: GuardState,
  options: AnySql['options'],
): Transaction {
  const check = () => {
    if (state.over()) throw transactionOver(STORE)
    const closed = state.closed()
    if (closed !== undefined) throw connectionClosed(closed)
  }
  const extra: Record<string, unknown> = {
    options,
    savepoint: savepointOf(() => tx, state),
    file: guardedFile(conn, state),
  }
  for (const [key, statement] of Object.entries(REFUSED_METHODS)) {
    extra[key] = () => {
      throw refusedStatement(STORE, statement)
    }
  }
  const tx = new Proxy(conn, {
    apply(target, self, args) {
      check()
      return guardQuery(state, Reflect.apply(target, self, args))
    },
    get(target, key) {
      if (typeof key === 'string' && key in extra) return extra[key]
      const value = Reflect.get(target, key)
      if (typeof value !== 'function') return value
      return (...args: unknown[]) => {
        check()
        return guardQuery(state, Reflect.apply(value, target, args))
      }
    },
  }) as unknown as Transaction
  return tx
}

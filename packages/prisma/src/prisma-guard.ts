/**
 * ctx.tx on Prisma: the delivery's interactive-transaction client behind a
 * guard. Raw statements that would end or split the delivery's transaction
 * (`COMMIT`, `ROLLBACK`, `BEGIN`, and on MySQL/MariaDB the statements that
 * commit implicitly: DDL, `LOCK TABLES`, ...) are refused before Prisma sends
 * them; once the database ended the transaction under the handler (a deadlock
 * on MySQL/MariaDB, which rolls the whole transaction back and leaves the
 * session in autocommit), every later statement is refused too, since it would
 * commit on its own. Everything else (models, fluent reads, nested
 * `$transaction`) is the client as Prisma made it: the type is the user's.
 */
import {
  refusedStatement,
  type SqlDialect,
  transactionControl,
  transactionGone,
} from '@affiliate-webhooks/core/internal'

const STORE = 'prismaStore'

/** The raw-query methods of a transaction client: the only ones that send the handler's own SQL text. */
const RAW = new Set([
  '$executeRaw',
  '$executeRawUnsafe',
  '$queryRaw',
  '$queryRawUnsafe',
  '$queryRawTyped',
])

/** What the guard of one delivery's ctx.tx shares with its store. */
export interface TxWatch {
  /** Why the transaction ended under the handler; set once, then every statement is refused. */
  gone: Error | undefined
}

/** How a database's errors say the transaction is gone; undefined for an error that leaves it open. */
export type GoneReason = (error: unknown) => string | undefined

interface SqlLike {
  strings?: unknown
  values?: unknown
  sql?: unknown
}

/** A template's text with its values as placeholders, nested `Prisma.sql`/`Prisma.raw` fragments inlined. */
function templateText(strings: readonly unknown[], values: readonly unknown[]): string {
  let text = String(strings[0] ?? '')
  for (let i = 1; i < strings.length; i++) {
    const value = values[i - 1] as SqlLike | null | undefined
    const inner = value !== null && typeof value === 'object' ? sqlText(value) : undefined
    text += `${inner ?? ' ? '}${String(strings[i] ?? '')}`
  }
  return text
}

/** The text of a `Prisma.sql` object (its strings) or a TypedSQL query (its `sql`). */
function sqlText(value: SqlLike): string | undefined {
  if (Array.isArray(value.strings)) {
    return templateText(value.strings, Array.isArray(value.values) ? value.values : [])
  }
  return typeof value.sql === 'string' ? value.sql : undefined
}

/**
 * The SQL text a raw call sends, as far as the call shows it: the string of
 * `$executeRawUnsafe`/`$queryRawUnsafe`, the joined template strings of the
 * tagged `$executeRaw`/`$queryRaw`, or the text of a `Prisma.sql` object.
 */
export function rawText(args: readonly unknown[]): string | undefined {
  const [first, ...rest] = args
  if (typeof first === 'string') return first
  if (Array.isArray(first)) return templateText(first, rest)
  if (first !== null && typeof first === 'object') return sqlText(first as SqlLike)
  return undefined
}

/** A Prisma-like lazy promise that rejects only when awaited: a refused call no one awaits is no unhandled rejection. */
function refused(error: Error): PromiseLike<never> {
  const settle = () => Promise.reject(error)
  return {
    // biome-ignore lint/suspicious/noThenProperty: a thenable, as Prisma's own promises are.
    then: (ok, fail) => settle().then(ok, fail),
    catch: (fail: (e: unknown) => unknown) => settle().catch(fail),
    finally: (last: () => void) => settle().finally(last),
    [Symbol.toStringTag]: 'PrismaPromise',
  } as PromiseLike<never>
}

/**
 * `result` (Prisma's lazy promise), with its failure shown to `watch` first.
 * Its other properties (the fluent API of a model query) stay as they are.
 */
function observed(result: unknown, note: (error: unknown) => void): unknown {
  if (typeof (result as PromiseLike<unknown> | null)?.then !== 'function') return result
  const promise = result as Promise<unknown>
  const then = (ok?: (v: unknown) => unknown, fail?: (e: unknown) => unknown) =>
    promise.then.call(promise, ok, (error: unknown) => {
      note(error)
      if (fail === undefined) throw error
      return fail(error)
    })
  return new Proxy(promise, {
    get(target, key) {
      if (key === 'then') return then
      if (key === 'catch') return (fail: (e: unknown) => unknown) => then(undefined, fail)
      if (key === 'finally') return (last: () => void) => Promise.resolve(then()).finally(last)
      return Reflect.get(target, key)
    },
  })
}

interface Guard {
  dialect: SqlDialect
  watch: TxWatch
  goneReason: GoneReason
}

/** Marks the transaction gone when `error` says the database ended it. */
const noter = (g: Guard) => (error: unknown) => {
  if (g.watch.gone !== undefined) return
  const why = g.goneReason(error)
  if (why !== undefined) g.watch.gone = transactionGone(STORE, why)
}

type Method = (...args: unknown[]) => unknown

/** A method of the transaction client, checked before it sends and watched after. */
function guardedMethod(g: Guard, target: object, key: string, method: Method): Method {
  const note = noter(g)
  return (...args: unknown[]) => {
    if (g.watch.gone !== undefined) return refused(g.watch.gone)
    if (RAW.has(key)) {
      const text = rawText(args)
      const statement = text === undefined ? undefined : transactionControl(text, g.dialect)
      if (statement !== undefined) return refused(refusedStatement(STORE, statement))
    }
    if (key === '$transaction' && typeof args[0] === 'function') {
      // A nested transaction (a savepoint): its client is guarded the same way.
      const work = args[0] as (inner: object) => unknown
      args[0] = (inner: object) => work(guardProxy(g, inner))
    }
    return observed(Reflect.apply(method, target, args), note)
  }
}

/** `client` (a transaction client or one of its model delegates), every method guarded. */
function guardProxy<T extends object>(g: Guard, client: T): T {
  const made = new Map<PropertyKey, unknown>()
  return new Proxy(client, {
    get(target, key) {
      const value = Reflect.get(target, key)
      if (typeof key === 'symbol' || value === null || value === undefined) return value
      if (made.has(key)) return made.get(key)
      let guarded: unknown = value
      if (typeof value === 'function') guarded = guardedMethod(g, target, key, value as Method)
      // A model delegate (`tx.ledger`): its create/update/... write through this transaction.
      else if (typeof value === 'object' && !key.startsWith('_')) guarded = guardProxy(g, value)
      made.set(key, guarded)
      return guarded
    },
  })
}

/**
 * ctx.tx: `tx` (Prisma's interactive-transaction client), refusing raw
 * statements that would end or split the transaction on `dialect`, and every
 * statement once `goneReason` saw the database end the transaction.
 */
export function guardTransaction<T extends object>(
  tx: T,
  dialect: SqlDialect,
  watch: TxWatch,
  goneReason: GoneReason,
): T {
  return guardProxy({ dialect, watch, goneReason }, tx)
}

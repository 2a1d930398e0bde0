/**
 * ctx.tx on node-postgres: the delivery's PoolClient, behind a guard that
 * refuses, before it is sent, any statement that would end or split the
 * delivery's transaction, and any query once the claim is over. Still a
 * PoolClient (instanceof, events, escapeLiteral...) for the user's tools.
 */
import {
  refusedStatement,
  transactionControl,
  transactionGone,
  transactionOver,
} from '@affiliate-webhooks/core/internal'
import type { PoolClient } from 'pg'

const STORE = 'postgresStore'

type Callback = (error: Error, result?: unknown) => void

/** A pg Submittable (pg.Query, pg-cursor, pg-query-stream): what pg sends, and how it reports an error. */
interface Submittable {
  submit: (connection: unknown) => void
  handleError?: (error: Error, connection: unknown) => void
  text?: unknown
  callback?: unknown
}

const isSubmittable = (config: unknown): config is Submittable =>
  typeof (config as Submittable | null)?.submit === 'function'

/** The text a `client.query(...)` call sends, where pg lets us see it. */
function textOf(config: unknown): string | undefined {
  if (typeof config === 'string') return config
  const text = (config as { text?: unknown } | null)?.text
  return typeof text === 'string' ? text : undefined
}

/** What the guard is told, and tells, about the claim's transaction. */
export interface GuardHooks {
  /** Settled (committed, released) or past its lease. */
  over: () => boolean
  /** Why the transaction ended under the handler, once it did. */
  gone: () => string | undefined
  /** The transaction ended under the handler: every later query is refused. */
  onGone: (why: string) => void
}

/** Why this query may not go out, or undefined. */
function refusal(hooks: GuardHooks, config: unknown): Error | undefined {
  if (hooks.over()) return transactionOver(STORE)
  const gone = hooks.gone()
  if (gone !== undefined) return transactionGone(STORE, gone)
  const text = textOf(config)
  const statement = text === undefined ? undefined : transactionControl(text, 'postgres')
  return statement === undefined ? undefined : refusedStatement(STORE, statement)
}

/**
 * The refusal, reported the way pg reports a failed query for this call shape:
 * the submittable's error handler, the callback, or a rejected promise. Never
 * thrown at the caller, so `.catch()` and callbacks see it as usual.
 */
function refuse(
  config: unknown,
  values: unknown,
  callback: unknown,
  error: Error,
  client: PoolClient,
) {
  if (isSubmittable(config)) {
    const connection = (client as unknown as { connection: unknown }).connection
    const report = config.handleError?.bind(config)
    process.nextTick(() => (report ? report(error, connection) : undefined))
    return config
  }
  const cb = [values, callback, (config as { callback?: unknown } | null)?.callback].find(
    (each) => typeof each === 'function',
  ) as Callback | undefined
  if (cb !== undefined) {
    process.nextTick(cb, error)
    return undefined
  }
  return Promise.reject(error)
}

const REFUSED_RELEASE =
  "ctx.tx.release() (the store's client goes back to the pool when it commits or rolls back)"

/** A statement's text as a message may show it: its start only. */
const clip = (text: string | undefined) =>
  text === undefined
    ? 'a statement'
    : `"${text.trim().replace(/\s+/g, ' ').slice(0, 60)}${text.length > 60 ? '…' : ''}"`

/**
 * After each of the handler's statements, the protocol's own word on the
 * transaction: the status of the ReadyForQuery that ended it ('I': no
 * transaction open). The claim's transaction is open from the store's BEGIN,
 * so 'I' means a statement of the handler ended it, however it was spelled;
 * so does the guard trigger's refusal of a COMMIT (AWESC).
 */
function watcher(client: PoolClient, hooks: GuardHooks, config: unknown) {
  const status = client as unknown as { getTransactionStatus?: () => string | null }
  return (error?: unknown) => {
    if (hooks.over() || hooks.gone() !== undefined) return
    const refused = (error as { code?: unknown } | undefined)?.code === 'AWESC'
    if (refused || status.getTransactionStatus?.() === 'I') {
      hooks.onGone(
        `${clip(textOf(config))} ended it${refused ? ': a COMMIT the server refused, the whole attempt rolled back' : ''}`,
      )
    }
  }
}

/** The query sent, with `check` run as it settles, in whichever way pg reports it. */
function watched(
  client: PoolClient,
  check: (error?: unknown) => void,
  args: [unknown, unknown, unknown],
): unknown {
  const [config, values, callback] = args
  if (isSubmittable(config)) {
    const emitter = config as unknown as {
      once?: (event: string, fn: (e?: unknown) => void) => void
    }
    emitter.once?.('end', () => check())
    emitter.once?.('error', (error) => check(error))
    return Reflect.apply(client.query, client, args)
  }
  const cbAt = typeof values === 'function' ? 1 : typeof callback === 'function' ? 2 : -1
  if (cbAt !== -1) {
    const cb = args[cbAt] as Callback
    const wrapped = [...args]
    wrapped[cbAt] = (error: Error, result?: unknown) => {
      check(error)
      cb(error, result)
    }
    return Reflect.apply(client.query, client, wrapped)
  }
  const sent = Reflect.apply(client.query, client, args) as Promise<unknown>
  return sent.then(
    (result) => {
      check()
      return result
    },
    (error: unknown) => {
      check(error)
      throw error
    },
  )
}

/**
 * The query as the handler gave it, sent through the extended protocol: one
 * statement per query, which the server enforces (42601 for a text with more).
 * In the simple protocol a text's statements after a hidden ROLLBACK would run
 * and commit on their own before its ReadyForQuery told the guard anything.
 */
function oneStatement(config: unknown, values: unknown): [unknown, unknown] {
  if (typeof config === 'string') {
    return [{ text: config, queryMode: 'extended' }, values]
  }
  if (typeof config === 'object' && config !== null && !isSubmittable(config)) {
    return [{ ...(config as object), queryMode: 'extended' }, values]
  }
  return [config, values]
}

/** ctx.tx: `client` whose `query` is checked first and whose `release` is the store's alone. */
export function guardedClient(client: PoolClient, hooks: GuardHooks): PoolClient {
  function query(config: unknown, values?: unknown, callback?: unknown) {
    const status = client as unknown as { getTransactionStatus?: () => string | null }
    // Known idle before it goes out: the transaction ended under a statement not awaited.
    if (!hooks.over() && hooks.gone() === undefined && status.getTransactionStatus?.() === 'I') {
      hooks.onGone('a statement of the handler ended it')
    }
    const refused = refusal(hooks, config)
    if (refused !== undefined) return refuse(config, values, callback, refused, client)
    const [sent, args] = oneStatement(config, values)
    return watched(client, watcher(client, hooks, config), [sent, args, callback])
  }
  const release = () => {
    throw refusedStatement(STORE, REFUSED_RELEASE)
  }
  return new Proxy(client, {
    get(target, key, receiver) {
      if (key === 'query') return query
      if (key === 'release') return release
      return Reflect.get(target, key, receiver)
    },
  })
}

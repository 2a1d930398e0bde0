/**
 * ctx.tx on node-postgres: the delivery's PoolClient, behind a guard that
 * refuses, before it is sent, any statement that would end or split the
 * delivery's transaction, and any query once the claim is over. Still a
 * PoolClient (instanceof, events, escapeLiteral...) for the user's tools.
 */
import {
  refusedStatement,
  transactionControl,
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

/** Why this query may not go out, or undefined. */
function refusal(over: () => boolean, config: unknown): Error | undefined {
  if (over()) return transactionOver(STORE)
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

/** ctx.tx: `client` whose `query` is checked first and whose `release` is the store's alone. */
export function guardedClient(client: PoolClient, over: () => boolean): PoolClient {
  function query(config: unknown, values?: unknown, callback?: unknown) {
    const refused = refusal(over, config)
    if (refused !== undefined) return refuse(config, values, callback, refused, client)
    return Reflect.apply(client.query, client, [config, values, callback]) as unknown
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

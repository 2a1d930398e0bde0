import { connect } from 'node:net'
import { STORE_STATEMENT_TIMEOUT_MS } from '@affiliate-webhooks/core/internal'
import type { Pool, PoolClient, QueryConfig, QueryResult, QueryResultRow } from 'pg'
import { connectionFailure, notReplicated } from './errors.js'
import type { SetupDriver } from './setup.js'

/**
 * One of the store's own statements, bounded client-side as well as by the
 * server: a database that stops answering without closing the connection fails
 * the statement after `timeoutMs` (the delivery is answered 503), and the client
 * that ran it is dropped.
 */
export const bounded = (
  text: string,
  values: unknown[] = [],
  timeoutMs = STORE_STATEMENT_TIMEOUT_MS,
): QueryConfig & { query_timeout: number } => ({ text, values, query_timeout: timeoutMs })

const heard = new WeakSet<PoolClient>()

/**
 * A checked-out client whose connection ends (a server killed, an address that
 * moved) emits 'error', which ends the process if nothing listens: the pool
 * listens only while the client is idle. The statement running on it fails
 * with the same error, and that is where the store handles it; this listener,
 * added once per client, only keeps the event from ending the process.
 */
export function listened(client: PoolClient): PoolClient {
  if (!heard.has(client)) {
    heard.add(client)
    client.on('error', () => {})
  }
  return client
}

/**
 * Runs one statement on a client of its own, taken within the store's deadline
 * (`pool.query` would wait for ever for a connection to a server that accepts it
 * and never answers); the client goes back to the pool, or is dropped if it failed.
 */
export async function queryWithin<Row extends QueryResultRow>(
  acquire: () => Promise<PoolClient>,
  config: QueryConfig & { query_timeout?: number },
): Promise<QueryResult<Row>> {
  const client = await acquire()
  try {
    const result = await client.query<Row>(config)
    client.release()
    return result
  } catch (error) {
    client.release(error as Error)
    // Past its bound: the statement is cancelled on the server too (a write
    // waiting for a synchronous standby would hold its backend otherwise).
    if (config.query_timeout !== undefined && (error as Error).message === 'Query read timeout')
      await cancelRequest(client)
    throw error
  }
}

/** The setup's statements on node-postgres: each bounded, the transaction on a client of its own. */
export function pgSetupDriver(pool: Pool, acquire: () => Promise<PoolClient>): SetupDriver {
  return {
    run: async <Row>(text: string, params: unknown[] = []) =>
      (await queryWithin(acquire, bounded(text, params))).rows as Row[],
    async transaction(work) {
      let client: PoolClient
      try {
        client = await acquire()
      } catch (error) {
        throw connectionFailure('postgresStore', pool, error)
      }
      try {
        await client.query(bounded('BEGIN'))
        await work(
          async <Row>(text: string, params: unknown[] = []) =>
            (await client.query(bounded(text, params))).rows as Row[],
        )
        await client.query(bounded('COMMIT'))
        client.release()
      } catch (error) {
        // Dropped rather than rolled back by hand: the server rolls back as it closes.
        client.release(error as Error)
        throw error
      }
    },
    failure: (cause) => connectionFailure('postgresStore', pool, cause),
  }
}

/**
 * The SQLSTATE of the warning a COMMIT gets when its wait for a synchronous
 * standby is cancelled (by the store at its bound, or by anyone's
 * pg_cancel_backend): the transaction committed on the primary and the COMMIT
 * succeeds, but no standby may have it, so a failover can lose it.
 */
const WARNING = '01000'

/** Wait after a cancel request for the COMMIT to answer before the client is dropped. */
export const CANCEL_GRACE_MS = 1000

/** Asks the server to cancel what `client` runs, on a connection of its own (the protocol's CancelRequest). */
export function cancelRequest(client: PoolClient): Promise<void> {
  const c = client as unknown as {
    host?: string
    port?: number
    processID?: number
    secretKey?: number
  }
  return new Promise((resolve) => {
    if (typeof c.processID !== 'number' || typeof c.secretKey !== 'number') return resolve()
    const host = c.host ?? 'localhost'
    const socket = host.startsWith('/')
      ? connect(`${host}/.s.PGSQL.${c.port ?? 5432}`)
      : connect(c.port ?? 5432, host)
    const done = () => {
      socket.destroy()
      resolve()
    }
    socket.setTimeout(CANCEL_GRACE_MS, done)
    socket.on('error', done)
    socket.on('close', done)
    socket.on('connect', () => {
      const packet = Buffer.alloc(16)
      packet.writeInt32BE(16, 0)
      packet.writeInt32BE(80877102, 4)
      packet.writeInt32BE(c.processID as number, 8)
      packet.writeInt32BE(c.secretKey as number, 12)
      socket.end(packet)
    })
  })
}

/**
 * Runs `text` (ending in COMMIT) on `client` and hands the client back: a
 * commit that returns only when the server and its synchronous standbys have
 * it. A COMMIT still waiting at `timeoutMs` (a synchronous standby gone: the
 * server does not end that wait on statement_timeout) is cancelled, so its
 * connection comes back to the pool rather than wait for the standby, and it
 * throws {@link notReplicated}, as does a COMMIT whose wait someone else
 * cancelled (the warning 01000). A client whose server does not answer even the
 * cancel is dropped. Throws the statement's own error otherwise (the client dropped).
 */
export async function commitAndRelease(
  client: PoolClient,
  store: string,
  text: string,
  timeoutMs = STORE_STATEMENT_TIMEOUT_MS,
): Promise<void> {
  let warned = false
  let kept = false
  const onNotice = (notice: { code?: string | undefined }) => {
    if (notice.code === WARNING) warned = true
  }
  // Errors reach the statement; a listener keeps the client's 'error' event from ending the process.
  const quiet = () => {}
  client.on('notice', onNotice)
  client.on('error', quiet)
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(resolve, timeoutMs, 'late')
  })
  const settled = client.query(text).then(
    () => ({ ok: true as const }),
    (error: unknown) => ({ ok: false as const, error }),
  )
  try {
    let outcome = await Promise.race([settled, late])
    if (outcome === 'late') {
      await cancelRequest(client)
      const grace = new Promise<'late'>((resolve) => {
        timer = setTimeout(resolve, CANCEL_GRACE_MS, 'late')
      })
      outcome = await Promise.race([settled, grace])
      if (outcome === 'late') {
        const error = notReplicated(store, timeoutMs)
        client.release(error)
        throw error
      }
      warned = true
    }
    if (!outcome.ok) {
      client.release(outcome.error as Error)
      throw outcome.error
    }
    // The COMMIT answered, so the session is idle and sound: it goes back either way.
    kept = true
    client.release()
    if (warned) throw notReplicated(store, timeoutMs)
  } finally {
    clearTimeout(timer)
    client.off('notice', onNotice)
    // A dropped client keeps it: it may report the end of its connection later.
    if (kept) client.off('error', quiet)
  }
}

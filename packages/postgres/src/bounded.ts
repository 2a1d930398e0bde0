import { STORE_STATEMENT_TIMEOUT_MS } from '@affiliate-webhooks/core/internal'
import type { Pool, PoolClient, QueryConfig, QueryResult, QueryResultRow } from 'pg'
import { connectionFailure } from './errors.js'
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

/**
 * Runs one statement on a client of its own, taken within the store's deadline
 * (`pool.query` would wait for ever for a connection to a server that accepts it
 * and never answers); the client goes back to the pool, or is dropped if it failed.
 */
export async function queryWithin<Row extends QueryResultRow>(
  acquire: () => Promise<PoolClient>,
  config: QueryConfig,
): Promise<QueryResult<Row>> {
  const client = await acquire()
  try {
    const result = await client.query<Row>(config)
    client.release()
    return result
  } catch (error) {
    client.release(error as Error)
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

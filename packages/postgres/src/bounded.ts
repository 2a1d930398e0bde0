import { STORE_STATEMENT_TIMEOUT_MS } from '@affiliate-webhooks/core/internal'
import type { PoolClient, QueryConfig, QueryResult, QueryResultRow } from 'pg'

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

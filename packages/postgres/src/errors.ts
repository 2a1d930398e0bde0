import { WebhookError } from '@affiliate-webhooks/core'
import type { Pool } from 'pg'

/** The code of the error a claim gets when the store ended its transaction at the end of its lease. */
const LEASE_ENDED = 'lease_ended'

/** Why a claim's transaction was ended by the store: its lease ran out while the handler ran. */
export function leaseEnded(leaseMs: number): Error {
  return Object.assign(
    new Error(
      `postgresStore: the handler ran past the lease (${leaseMs} ms): its transaction was ended and rolled back`,
    ),
    { code: LEASE_ENDED },
  )
}

/** The code of the error of a commit no synchronous standby confirmed within the bound. */
const NOT_REPLICATED = 'not_replicated'

/**
 * Why a delivery is answered 503 though its COMMIT may stand on the primary:
 * no synchronous standby confirmed it within the bound. The service's retry
 * finds the mark (a duplicate, answered once the standby has it), or, after a
 * failover that lost it, applies the event once.
 */
export function notReplicated(store: string, timeoutMs: number, cause?: unknown): Error {
  return Object.assign(
    new Error(
      `${store}: the commit did not answer within ${timeoutMs} ms (the database, or a synchronous standby it waits for, is not answering): it may stand on the primary only, so the delivery is not acknowledged and the service retries it`,
      { cause },
    ),
    { code: NOT_REPLICATED },
  )
}

/** True for {@link notReplicated}: the connection was handed back already. */
export const isNotReplicated = (error: unknown): boolean => codeOf(error) === NOT_REPLICATED

/**
 * The server refused the duplicate's wait for its standbys itself: the role may
 * not run pg_logical_emit_message (42501), or the server has no such function
 * (42883). The duplicate is then answered from the mark as it stands.
 */
export const isBarrierRefused = (error: unknown): boolean =>
  codeOf(error) === '42501' || codeOf(error) === '42883'

/** SQLSTATEs (and the store's own code) after which a claim's transaction is over without a commit. */
const TRANSACTION_OVER = new Set([
  // The server ended the session: idle in the transaction past the lease.
  '25P03',
  LEASE_ENDED,
  // The claim's transaction was ended (and maybe another begun) by the handler itself.
  'AWLST',
])

const codeOf = (error: unknown): unknown =>
  typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined

/** True when the claim's transaction ended before its commit because its lease ran out. */
export const isLeaseEnd = (error: unknown): boolean => TRANSACTION_OVER.has(codeOf(error) as string)

/** True when the claim waited lockWaitMs for a row another live transaction holds (lock_timeout). */
export const isLockNotAvailable = (error: unknown): boolean => codeOf(error) === '55P03'

/** True when a statement failed earlier in the transaction (one the handler caught): it can only roll back. */
export const isAborted = (error: unknown): boolean => codeOf(error) === '25P02'

/** True when the held check found the claim's transaction ended (and maybe another begun) under the store. */
export const isHandlerEnded = (error: unknown): boolean => codeOf(error) === 'AWLST'

/** True when the guard trigger refused a COMMIT the store did not send (the handler's). */
export const isEscapeRefused = (error: unknown): boolean => codeOf(error) === 'AWESC'

/**
 * The held check found the delivery's transaction ended before the store's
 * commit: only the handler's statements ran on that connection meanwhile, so it
 * is the handler's doing (answered 500 like a handler that threw), not the
 * store's. What was kept: nothing. A COMMIT of the handler's that carried the
 * claim was refused by the server (the guard trigger), which rolled the whole
 * attempt back; after a ROLLBACK of its own, what it wrote went with it, and
 * the session took no writes outside the claim (read-only). The event is not
 * marked handled, so the service's retry runs the handler again.
 */
export function handlerEndedTransaction(
  store: string,
  cause: unknown,
  seen?: string,
): WebhookError {
  const what = seen === undefined ? 'a COMMIT or ROLLBACK the store could not see' : seen
  return new WebhookError(
    'handler_failed',
    `${store}: the handler ended the delivery's transaction itself on ctx.tx (${what}) before the store's commit. Nothing it wrote in this attempt was kept and the event is not marked handled: the service's retry runs the handler again. Let the store commit (return from the handler) or roll back (throw); use a savepoint for a part that may fail.`,
    { cause },
  )
}

interface ConnectionFacts {
  host: string
  port: string
  database: string
  user: string
}

/** Where the pool connects, from its options and the PG* variables it would read: never the password. */
function connectionFacts(pool: Pool): ConnectionFacts {
  const options = ((pool as unknown as { options?: Record<string, unknown> }).options ??
    {}) as Record<string, unknown>
  const env = process.env
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined)
  let url: URL | undefined
  try {
    const given = text(options.connectionString)
    url = given === undefined ? undefined : new URL(given)
  } catch {
    url = undefined
  }
  return {
    host: text(options.host) ?? text(url?.hostname) ?? text(env.PGHOST) ?? 'localhost',
    port: String(options.port ?? (text(url?.port) || undefined) ?? text(env.PGPORT) ?? 5432),
    database:
      text(options.database) ??
      text(url?.pathname.slice(1)) ??
      text(env.PGDATABASE) ??
      text(options.user) ??
      text(env.PGUSER) ??
      'postgres',
    user: text(options.user) ?? text(url?.username) ?? text(env.PGUSER) ?? 'postgres',
  }
}

/** `host:port/database as user`, for messages: the database, never its secret. */
export function describeDatabase(pool: Pool): string {
  const { host, port, database, user } = connectionFacts(pool)
  return `PostgreSQL at ${host}:${port}/${database} as user ${user}`
}

/** A clear error for a pool that cannot reach its database, naming it and the setting to check. */
export function connectionFailure(caller: string, pool: Pool, cause: unknown): Error {
  return unreachable(
    `${caller}: cannot use ${describeDatabase(pool)}`,
    "Check the pool's connection settings (connectionString, or host, port, database, user).",
    cause,
  )
}

/** `what (code: message). hint`, the cause kept: the database named, never its secret. */
export function unreachable(what: string, hint: string, cause: unknown): Error {
  const code = codeOf(cause)
  const message = cause instanceof Error ? cause.message : String(cause)
  const reason = typeof code === 'string' && code !== '' ? `${code}: ${message}` : message
  return new Error(`${what} (${reason}). ${hint}`, { cause })
}

import type { Pool } from 'pg'

/** SQLSTATEs after which a claim's transaction is over without a commit. */
const TRANSACTION_OVER = new Set([
  // The server ended the session: idle in the transaction past the lease.
  '25P03',
  // A statement failed earlier (one the handler caught): the transaction can only roll back.
  '25P02',
])

/** True when the claim's transaction ended before its commit, by the lease or a failed statement. */
export const isLeaseEnd = (error: unknown): boolean =>
  typeof error === 'object' &&
  error !== null &&
  TRANSACTION_OVER.has((error as { code?: unknown }).code as string)

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
  const reason =
    (cause as { code?: string }).code ?? (cause as Error | undefined)?.message ?? String(cause)
  return new Error(
    `${caller}: cannot use ${describeDatabase(pool)} (${reason}). Check the pool's connection settings (connectionString, or host, port, database, user).`,
    { cause },
  )
}

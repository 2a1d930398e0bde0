import type { Pool } from 'mysql2/promise'

interface ConnectionFacts {
  where: string
  database: string
  user: string
}

/** Where the pool connects, from its own options: never the password. */
function connectionFacts(pool: Pool): ConnectionFacts {
  const config = ((pool as unknown as { pool?: { config?: { connectionConfig?: unknown } } }).pool
    ?.config?.connectionConfig ?? {}) as Record<string, unknown>
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined)
  const socket = text(config.socketPath)
  return {
    where: socket ?? `${text(config.host) ?? 'localhost'}:${String(config.port ?? 3306)}`,
    database: text(config.database) ?? '(no database selected)',
    user: text(config.user) ?? '(no user)',
  }
}

/** `MySQL at host:port/database as user user`, for messages: the database, never its secret. */
export function describeDatabase(pool: Pool): string {
  const { where, database, user } = connectionFacts(pool)
  return `MySQL at ${where}/${database} as user ${user}`
}

/** What to check for the usual causes, by the driver's error code. */
function hintFor(code: string | undefined): string {
  switch (code) {
    case 'ER_ACCESS_DENIED_ERROR':
    case 'ER_DBACCESS_DENIED_ERROR':
      return "Check the pool's user and password, and that the user may use this database."
    case 'ER_BAD_DB_ERROR':
      return "Create the database, or fix the pool's `database` (the path of DATABASE_URL)."
    case 'ER_TABLEACCESS_DENIED_ERROR':
    case 'ER_PROCACCESS_DENIED_ERROR':
    case 'ER_SPECIFIC_ACCESS_DENIED_ERROR':
      return 'Grant the user CREATE, CREATE ROUTINE and EXECUTE on the database, or create the tables with `affiliate-webhooks sql schema --mysql`.'
    default:
      return "Check the pool's connection settings (the URL, or host, port, database, user) and that the server is up."
  }
}

/** The driver's own words, without anything that looks like a credential. */
function reasonOf(cause: unknown): string {
  const error = cause as { code?: unknown; message?: unknown } | undefined
  const message = typeof error?.message === 'string' ? error.message : String(cause)
  const scrubbed = message.replace(/[a-z][a-z0-9+.-]*:\/\/[^\s]*/gi, '<url>')
  return typeof error?.code === 'string' && !scrubbed.includes(error.code)
    ? `${error.code}: ${scrubbed}`
    : scrubbed
}

/** A clear error for a pool that cannot reach or use its database, naming it and the setting to check. */
export function connectionFailure(caller: string, pool: Pool, cause: unknown): Error {
  const code = (cause as { code?: string } | undefined)?.code
  return new Error(
    `${caller}: cannot use ${describeDatabase(pool)} (${reasonOf(cause)}). ${hintFor(code)}`,
    { cause },
  )
}

/** Errors after which the connection is gone (the server ended the session, or the network did). */
const CONNECTION_LOST = new Set([
  'PROTOCOL_CONNECTION_LOST',
  'ECONNRESET',
  'EPIPE',
  'ER_CLIENT_INTERACTION_TIMEOUT',
  'ER_CONNECTION_KILLED',
  'ER_SERVER_SHUTDOWN',
])

/** True when the error says the claim's connection (and so its transaction) is gone. */
export function isConnectionLost(error: unknown): boolean {
  const { code, errno, fatal, message } = (error ?? {}) as {
    code?: string
    errno?: number
    fatal?: boolean
    message?: string
  }
  return (
    fatal === true ||
    // MySQL 8.0.24+ says why before it closes an idle session: ER_CLIENT_INTERACTION_TIMEOUT.
    errno === 4031 ||
    (code !== undefined && CONNECTION_LOST.has(code)) ||
    (typeof message === 'string' && message.includes('connection is in closed state'))
  )
}

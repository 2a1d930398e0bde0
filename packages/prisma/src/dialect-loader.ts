import type { Dialect, DialectParts } from './dialect.js'
import { mysqlDialect } from './mysql-dialect.js'
import { postgresDialect } from './postgres-dialect.js'

/** The store package each database's statements come from: an optional peer, installed by the app. */
export const DIALECT_PACKAGES = {
  postgresql: { name: '@affiliate-webhooks/postgres', database: 'PostgreSQL' },
  mysql: { name: '@affiliate-webhooks/mysql', database: 'MySQL/MariaDB' },
} as const

const notInstalled = (error: unknown, name: string): boolean => {
  const { code, message } = error as { code?: unknown; message?: unknown }
  return (
    (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
    String(message).includes(name)
  )
}

/**
 * The error for a store package the app did not install: which one, and the
 * command. Thrown by `ready()` (and so answered 503 until it is installed: the
 * service retries, nothing is lost), and logged.
 */
function missingStore(error: unknown, provider: keyof typeof DIALECT_PACKAGES): Error {
  const { name, database } = DIALECT_PACKAGES[provider]
  if (!notInstalled(error, name)) return error as Error
  return Object.assign(
    new Error(
      `prismaStore: the Prisma client is on ${database}, and this store runs there with ${name}, which is not installed: npm install ${name}`,
      { cause: error },
    ),
    { code: 'store_package_missing' },
  )
}

/**
 * Imports the dialect of the client's database, and with it the statements of
 * that database's store, only when the store first runs: an app on PostgreSQL
 * installs `@affiliate-webhooks/postgres`, not the MySQL store too. Each
 * specifier is written out (bundlers include the installed one; a missing one is
 * a build warning, not an error, as the import is caught).
 */
export async function loadDialect(
  provider: keyof typeof DIALECT_PACKAGES,
  parts: DialectParts,
): Promise<Dialect> {
  if (provider === 'postgresql') {
    let internals: typeof import('@affiliate-webhooks/postgres/internal')
    try {
      internals = await import('@affiliate-webhooks/postgres/internal')
    } catch (error) {
      throw missingStore(error, provider)
    }
    return postgresDialect(internals, parts)
  }
  let internals: typeof import('@affiliate-webhooks/mysql/internal')
  try {
    internals = await import('@affiliate-webhooks/mysql/internal')
  } catch (error) {
    throw missingStore(error, provider)
  }
  return mysqlDialect(internals, parts)
}

import { MissingPackageError } from '../../framework/io.js'

/** Redis for secrets (`--redis`): the store package and its client, optional peers of the CLI. */
export const REDIS_PACKAGES = ['@affiliate-webhooks/redis', 'ioredis'] as const
/** The PostgreSQL store (`sql schema --postgres`). */
export const POSTGRES_PACKAGES = ['@affiliate-webhooks/postgres', 'pg'] as const
/** The MySQL store (`sql schema --mysql`). */
export const MYSQL_PACKAGES = ['@affiliate-webhooks/mysql', 'mysql2'] as const
/** The SQLite store (`sql held --database FILE`); node:sqlite or better-sqlite3 opens the file. */
export const SQLITE_PACKAGES = ['@affiliate-webhooks/sqlite'] as const
/** The BullMQ hand-off (`queue`). */
export const BULLMQ_PACKAGES = ['@affiliate-webhooks/bullmq', 'bullmq'] as const

const notFound = (error: unknown, names: readonly string[]): boolean => {
  const { code, message } = error as { code?: unknown; message?: unknown }
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false
  return names.some(
    (name) => String(message).includes(`'${name}'`) || String(message).includes(`'${name}/`),
  )
}

/**
 * Imports a store package the CLI lists as an optional peer dependency, when the
 * command that needs it runs. When it (or its driver) is not installed: one line
 * naming what to install, instead of a stack.
 */
export async function importOptional<T>(
  load: () => Promise<T>,
  packages: readonly string[],
  what: string,
): Promise<T> {
  try {
    return await load()
  } catch (error) {
    if (!notFound(error, packages)) throw error
    throw new MissingPackageError(
      `${what} needs ${packages.join(' and ')}, which are not installed: npm install ${packages.join(' ')}`,
    )
  }
}

/**
 * The endpoint secret kept in Redis, where redisSecretSource reads it: the
 * connection `--redis URL` names, made before anything irreversible happens, and
 * the write of a secret the service has just shown once (`endpoints create`,
 * `rotate`; `secrets put` writes its own).
 */
import type { Redis } from 'ioredis'
import { SECRET_ENV, UsageError } from '../../framework/io.js'
import { formatKeptSecret } from '../../text/storage/secret-text.js'
import { importOptional, REDIS_PACKAGES } from '../support/optional-package.js'

/** The Redis secret kit, imported when a command uses `--redis` (an optional peer). */
const redisKit = () =>
  importOptional(() => import('@affiliate-webhooks/redis/internal'), REDIS_PACKAGES, '--redis')

/** `--redis URL`, connected before anything irreversible happens; undefined when not given. */
export async function connectSecretRedis(values: { redis?: string }): Promise<Redis | undefined> {
  const url = values.redis
  if (url === undefined) return undefined
  try {
    const { connectRedisNow } = await redisKit()
    return await connectRedisNow(url)
  } catch (error) {
    if (error instanceof TypeError) throw new UsageError(`--redis ${error.message}`)
    throw error
  }
}

/**
 * Puts a secret the service has just shown (once) where it must go: first in
 * Redis for redisSecretSource, and/or on stdout with --show-secret.
 */
export async function keepSecret(
  endpointId: string,
  secret: string,
  values: { 'show-secret'?: boolean },
  redis: Redis | undefined,
  graceMs?: number,
): Promise<string> {
  const notes = redis
    ? formatKeptSecret(
        await (await redisKit()).keepShownSecret({ client: redis, endpointId, secret, graceMs }),
      )
    : []
  if (values['show-secret']) notes.push(`secret ${secret}`, `export ${SECRET_ENV}=${secret}`)
  return notes.join('\n')
}

/**
 * Putting a secret where redisSecretSource reads it, as the CLI's
 * `endpoints create --redis`, `rotate` and `secrets put` do: a connection made
 * before anything irreversible happens, the write, and what the key holds after
 * (as data: the CLI's text/secret-text.ts writes the lines).
 */
import { writeFile } from 'node:fs/promises'
import { Redis } from 'ioredis'
import { recommendedRedisOptions } from './redis-store.js'
import { redisSecretSource } from './secret-source.js'

/**
 * A Redis client connected now, with no retrying: for a one-shot command that
 * must know Redis is there before it asks the service for a secret it shows once.
 * Throws a TypeError when `url` is not a URL, and an Error naming the host
 * ("nothing was changed") when Redis cannot be reached. Disconnect it when done.
 */
export async function connectRedisNow(url: string): Promise<Redis> {
  let host: string
  try {
    host = new URL(url).host
  } catch {
    // Not echoed: a Redis URL may carry a password.
    throw new TypeError('the Redis URL given is not a URL (expected redis://host:port)')
  }
  const client = new Redis(url, {
    ...recommendedRedisOptions,
    lazyConnect: true,
    retryStrategy: () => null,
  })
  client.on('error', () => {}) // reported by connect() below, once
  try {
    await client.connect()
  } catch (error) {
    client.disconnect()
    throw new Error(
      `cannot reach Redis at ${host} (${(error as Error).message}); nothing was changed`,
    )
  }
  return client
}

/** What {@link keepShownSecret} stores, and where. */
export interface KeepShownSecretOptions {
  /** A connected client, e.g. from {@link connectRedisNow}. */
  client: Redis
  endpointId: string
  /** The secret the service has just shown, once. */
  secret: string
  /** Rotate: keep the older secrets this long. Absent: the key holds only this secret. */
  graceMs?: number | undefined
  /** Where the secret goes if the write fails. Default the working directory. */
  fallbackDir?: string | undefined
}

/** What {@link keepShownSecret} did: the key it wrote, and after a rotation what the key holds. */
export interface KeptSecret {
  /** The Redis key redisSecretSource reads for this endpoint. */
  key: string
  /** After a rotation: every secret the key holds, the new one first, with when each stops verifying (null: current). Null when the secret was stored alone. */
  held: { secret: string; expiresAt: number | null }[] | null
}

/**
 * Stores a secret the service has just shown once in the key redisSecretSource
 * reads: first, with the older ones kept for `graceMs` (a rotation), or alone.
 * Returns the key and, after a rotation, what it holds.
 * If the write fails the secret is not lost: it goes to a file only its owner
 * can read, and the Error thrown names that file.
 */
export async function keepShownSecret(options: KeepShownSecretOptions): Promise<KeptSecret> {
  const { client, endpointId, secret, graceMs } = options
  const source = redisSecretSource({ client, endpointId })
  try {
    if (graceMs === undefined) await source.set([secret])
    else await source.rotate(secret, { graceMs })
    return { key: source.key, held: graceMs === undefined ? null : await source.entries() }
  } catch (error) {
    const file = `whsec-${endpointId}-${Date.now()}.txt`
    const dir = options.fallbackDir ?? '.'
    await writeFile(`${dir}/${file}`, `${secret}\n`, { mode: 0o600 })
    throw new Error(
      `the service has the new secret, but storing it in Redis failed (${(error as Error).message}); it is in ${dir}/${file} (mode 600): put it where your receivers read it, then delete the file`,
    )
  }
}

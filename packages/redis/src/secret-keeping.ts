/**
 * Putting a secret where redisSecretSource reads it, as the CLI's
 * `endpoints create --redis`, `rotate` and `secrets put` do: a connection made
 * before anything irreversible happens, the write, and what the key holds after.
 */
import { writeFile } from 'node:fs/promises'
import { Redis } from 'ioredis'
import { recommendedRedisOptions } from './redis-store.js'
import { type RedisSecretSource, redisSecretSource } from './secret-source.js'

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

/**
 * What the source's key holds now, read back, in one line: each secret by its
 * last four characters and until when it verifies. Never a whole secret.
 */
export async function describeHeldSecrets(source: RedisSecretSource): Promise<string> {
  const held = await source.entries()
  const list = held.map(
    ({ secret, expiresAt }) =>
      `...${secret.slice(-4)} (${expiresAt === null ? 'current' : `verifies until ${new Date(expiresAt).toISOString()}`})`,
  )
  const only = held.length === 1 ? '; a delivery signed with any other secret will not verify' : ''
  return `Redis key ${source.key} holds ${held.length} secret${held.length === 1 ? '' : 's'}: ${list.join(', ')}${only}`
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

/**
 * Stores a secret the service has just shown once in the key redisSecretSource
 * reads: first, with the older ones kept for `graceMs` (a rotation), or alone.
 * Returns what to tell the user: the key, and after a rotation what it holds.
 * If the write fails the secret is not lost: it goes to a file only its owner
 * can read, and the Error thrown names that file.
 */
export async function keepShownSecret(options: KeepShownSecretOptions): Promise<string[]> {
  const { client, endpointId, secret, graceMs } = options
  const source = redisSecretSource({ client, endpointId })
  try {
    if (graceMs === undefined) await source.set([secret])
    else await source.rotate(secret, { graceMs })
    const stored = `secret stored first in Redis key ${source.key}`
    return graceMs === undefined ? [stored] : [stored, await describeHeldSecrets(source)]
  } catch (error) {
    const file = `whsec-${endpointId}-${Date.now()}.txt`
    const dir = options.fallbackDir ?? '.'
    await writeFile(`${dir}/${file}`, `${secret}\n`, { mode: 0o600 })
    throw new Error(
      `the service has the new secret, but storing it in Redis failed (${(error as Error).message}); it is in ${dir}/${file} (mode 600): put it where your receivers read it, then delete the file`,
    )
  }
}

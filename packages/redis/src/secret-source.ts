import type { Logger, SecretSource } from '@affiliate-webhooks/core'
import type { Cluster, Redis } from 'ioredis'
import { clientFor } from './redis-store.js'

/** Options of {@link redisSecretSource}. */
export interface RedisSecretSourceOptions {
  /** An ioredis `Redis` or `Cluster` you created. The source never closes it. */
  client?: Redis | Cluster | undefined
  /** Instead of `client`: a `redis://` URL; the source creates the client. */
  url?: string | undefined
  /** Where a source made from `url` reports a lost connection. Default `console`; `false` silences it. */
  logger?: Logger | false | undefined
  /** The webhook endpoint whose secrets these are (the service's endpoint id). */
  endpointId: string
  /** Prefix of the key; default `aw:`. The key is `<prefix>secrets:{<endpointId>}`. */
  prefix?: string | undefined
  /** Least time between two asks after a signature matched none, ms. Default 5000. */
  refreshIntervalMs?: number | undefined
  /** Clock in ms, for tests. Default `Date.now`. */
  now?: (() => number) | undefined
  /**
   * For a source made from `url`: how long its first calls wait for the
   * connection to open, ms, instead of failing because it is not open yet.
   * Default 2000 (a receiver answers well inside the service's 10 s).
   */
  connectTimeoutMs?: number | undefined
}

/** A {@link SecretSource} on Redis, with the writes `rotate` needs. */
export interface RedisSecretSource extends SecretSource {
  /** The key the secrets live in. */
  readonly key: string
  readonly client: Redis | Cluster
  /** The secrets in force now, newest first. */
  getSecrets(): Promise<string[]>
  /** The same, each with when it stops verifying (epoch ms; null for the current one). */
  entries(): Promise<{ secret: string; expiresAt: number | null }[]>
  /**
   * Puts `secret` first and keeps every other secret for at most `graceMs` more
   * (an earlier expiry is never extended), so deliveries signed before the
   * switch still verify. One atomic step.
   */
  rotate(secret: string, options?: { graceMs?: number }): Promise<void>
  /** Replaces the list: these secrets, newest first, none expiring. */
  set(secrets: readonly string[]): Promise<void>
}

/** One stored secret: expiresAt (ms) is absent for the current one. */
interface Entry {
  secret: string
  expiresAt?: number
}

// Atomic read-modify-write: a rotation racing another can't drop either secret.
const ROTATE = `
local raw = redis.call('GET', KEYS[1])
local list = {}
if raw then list = cjson.decode(raw) end
local now = tonumber(ARGV[2])
local until_ms = now + tonumber(ARGV[3])
local out = { { secret = ARGV[1] } }
for _, entry in ipairs(list) do
  if type(entry) == 'table' and entry.secret ~= ARGV[1] then
    local expires = entry.expiresAt
    if type(expires) ~= 'number' or expires > until_ms then expires = until_ms end
    if expires > now then table.insert(out, { secret = entry.secret, expiresAt = expires }) end
  end
end
redis.call('SET', KEYS[1], cjson.encode(out))
return #out
`

/**
 * The endpoint's signing secrets in one Redis key, newest first, shared by every
 * receiver process: pass it as `secret` and each process picks up a rotation at
 * its next delivery signed with the new secret, without a restart.
 * `affiliate-webhooks rotate` writes it.
 */
export function redisSecretSource(options: RedisSecretSourceOptions): RedisSecretSource {
  if (typeof options.endpointId !== 'string' || options.endpointId === '') {
    throw new TypeError('redisSecretSource: `endpointId` is required (the webhook endpoint id)')
  }
  if (/[{}]/.test(options.endpointId)) {
    throw new TypeError('redisSecretSource: `endpointId` may not contain braces')
  }
  const client = clientFor(options, 'redisSecretSource')
  const key = `${options.prefix ?? 'aw:'}secrets:{${options.endpointId}}`
  const now = options.now ?? Date.now
  // A client made here is still connecting; with no offline queue its first command would fail.
  const connected =
    options.client === undefined
      ? firstConnection(client, options.connectTimeoutMs ?? 2000, 'redisSecretSource')
      : () => Promise.resolve()
  const entries = async () => {
    await connected()
    const raw = await client.get(key)
    if (raw === null) return []
    const at = now()
    return (JSON.parse(raw) as Entry[])
      .filter((entry) => entry.expiresAt === undefined || entry.expiresAt > at)
      .map((entry) => ({ secret: entry.secret, expiresAt: entry.expiresAt ?? null }))
  }
  return {
    key,
    client,
    refreshIntervalMs: options.refreshIntervalMs,
    emptyHint: `Redis key ${key} holds none; store the endpoint's secret there with: affiliate-webhooks secrets put ${options.endpointId} --redis <url>`,
    entries,
    async getSecrets() {
      try {
        return (await entries()).map((entry) => entry.secret)
      } catch (error) {
        // The cause names the key read, whatever failed: an outage, a timeout, bad JSON.
        throw new Error(`reading Redis key ${key}: ${(error as Error).message}`, { cause: error })
      }
    },
    async rotate(secret, { graceMs = 10 * 60_000 } = {}) {
      if (!secret.startsWith('whsec_'))
        throw new TypeError('redisSecretSource.rotate: not a whsec_ secret')
      await connected()
      await client.eval(ROTATE, 1, key, secret, String(now()), String(Math.max(0, graceMs)))
    },
    async set(secrets) {
      const entries: Entry[] = secrets.map((secret) => ({ secret }))
      await connected()
      await client.set(key, JSON.stringify(entries))
    },
  }
}

/**
 * Waits, at most `timeoutMs`, for a client's first connection; once it has
 * been ready, calls go straight through (a later outage fails fast, as the
 * recommended options intend).
 */
function firstConnection(client: Redis | Cluster, timeoutMs: number, caller: string) {
  let opened: Promise<void> | undefined
  let ready = client.status === 'ready'
  client.once('ready', () => {
    ready = true
  })
  return (): Promise<void> => {
    if (ready) return Promise.resolve()
    opened ??= new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        client.off('ready', done)
        opened = undefined
        reject(new Error(`${caller}: no connection to Redis within ${timeoutMs} ms`))
      }, timeoutMs)
      function done() {
        clearTimeout(timer)
        resolve()
      }
      client.once('ready', done)
    })
    return opened
  }
}

/**
 * Issue 48: the Redis store reads maxmemory and maxmemory-policy once when it
 * connects and warns once when Redis can evict its keys. The decision is a pure
 * function of INFO's text; private servers show the line said, or not said.
 */
import { randomUUID } from 'node:crypto'
import type { Logger } from '@affiliate-webhooks/core'
import { redisStore } from '@affiliate-webhooks/redis'
import { evictionRisk } from '@affiliate-webhooks/redis/internal'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest'
import { type RedisServer, startRedis } from '../support/redis-servers.js'

const info = (maxmemory: string, policy: string) =>
  `# Memory\r\nused_memory:1015824\r\nmaxmemory:${maxmemory}\r\nmaxmemory_human:10.00M\r\nmaxmemory_policy:${policy}\r\nallocator_frag_ratio:1.00\r\n`

describe('evictionRisk (INFO memory)', () => {
  it('is risky with a limit and any policy but noeviction', () => {
    expect(evictionRisk(info('10485760', 'allkeys-lru'))).toEqual({
      policy: 'allkeys-lru',
      maxmemory: 10485760,
      risky: true,
    })
    for (const policy of ['allkeys-lfu', 'allkeys-random', 'volatile-lru', 'volatile-ttl']) {
      expect(evictionRisk(info('1000', policy))?.risky).toBe(true)
    }
  })

  it('is not risky with noeviction, or with maxmemory 0 (no limit: nothing is evicted)', () => {
    expect(evictionRisk(info('10485760', 'noeviction'))?.risky).toBe(false)
    expect(evictionRisk(info('0', 'allkeys-lru'))).toEqual({
      policy: 'allkeys-lru',
      maxmemory: 0,
      risky: false,
    })
  })

  it('cannot tell when INFO hides the fields', () => {
    expect(evictionRisk('# Memory\r\nused_memory:1015824\r\n')).toBeUndefined()
    expect(evictionRisk('maxmemory_policy:allkeys-lru\r\n')).toBeUndefined()
    expect(evictionRisk('')).toBeUndefined()
  })
})

const WARNING =
  "redisStore: Redis has maxmemory-policy allkeys-lru with maxmemory 10485760 bytes, so under memory pressure it can evict the store's de-duplication marks and watermarks: an event is then handled twice, or an older status applied over a newer one. Set maxmemory-policy noeviction (a full Redis then refuses writes: the receiver answers 503 and the service retries)."

const VOLATILE_WARNING =
  "redisStore: Redis has maxmemory-policy volatile-ttl with maxmemory 10485760 bytes, so under memory pressure it can evict the store's de-duplication marks and watermarks (every key the store writes has a TTL, so a volatile-* policy evicts them too): an event is then handled twice, or an older status applied over a newer one. Set maxmemory-policy noeviction (a full Redis then refuses writes: the receiver answers 503 and the service retries)."

function recorder() {
  const warnings: string[] = []
  const errors: string[] = []
  const logger: Logger = { warn: (line) => warnings.push(line), error: (line) => errors.push(line) }
  return { logger, warnings, errors }
}

/** A few deliveries through the store: the check never stands in their way. */
async function deliver(store: ReturnType<typeof redisStore>, times = 3) {
  for (let i = 0; i < times; i++) {
    const begun = await store.begin({
      eventId: `evt_${randomUUID()}`,
      // A conversion of its own each time: never stale.
      conversionId: Math.floor(Math.random() * 2 ** 40),
      order: 2000 + i,
      leaseMs: 5000,
    })
    expect(begun.status).toBe('claimed')
    if (begun.status === 'claimed') expect(await store.commit(begun.claim)).toBe(true)
  }
}

/** INFO went out before the first script on the same connection: its answer is in once they are. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 100))

describe('redisStore on a Redis that can evict', () => {
  const servers: Record<string, RedisServer> = {}
  beforeAll(async () => {
    const started = await Promise.allSettled([
      startRedis(['--maxmemory', '10mb', '--maxmemory-policy', 'allkeys-lru']),
      startRedis(['--maxmemory', '10mb', '--maxmemory-policy', 'volatile-ttl']),
      startRedis(['--maxmemory', '10mb', '--maxmemory-policy', 'noeviction']),
      startRedis(['--maxmemory', '0', '--maxmemory-policy', 'allkeys-lru']),
      // As a managed service whose ACL refuses INFO (NOPERM).
      startRedis([
        '--maxmemory',
        '10mb',
        '--maxmemory-policy',
        'allkeys-lru',
        '--user',
        'default',
        'on',
        'nopass',
        '~*',
        '&*',
        '+@all',
        '-info',
      ]),
    ])
    const names = ['lru', 'volatile', 'noeviction', 'unlimited', 'hidden']
    started.forEach((result, i) => {
      if (result.status === 'fulfilled') servers[names[i] as string] = result.value
    })
    const failed = started.find((result) => result.status === 'rejected')
    if (failed !== undefined) throw failed.reason
  })
  afterAll(async () => {
    await Promise.all(Object.values(servers).map((server) => server.stop()))
  })

  it('allkeys-lru with maxmemory 10mb: one warning, said once, deliveries unaffected', async () => {
    const { logger, warnings, errors } = recorder()
    const store = redisStore({ url: servers.lru?.url, logger })
    try {
      await deliver(store)
      await vi.waitFor(() => expect(warnings).toEqual([WARNING]))
      // More deliveries: still the one line.
      await deliver(store)
      await settle()
      expect(warnings).toEqual([WARNING])
      expect(errors).toEqual([])
    } finally {
      await store.close()
    }
  })

  it('a store given a client already connected checks it at once', async () => {
    const client = new Redis(servers.lru?.url as string)
    await client.ping()
    const { logger, warnings } = recorder()
    const store = redisStore({ client, logger })
    try {
      await vi.waitFor(() => expect(warnings).toEqual([WARNING]))
    } finally {
      await store.close()
    }
  })

  it('volatile-ttl: the store keys all have a TTL, so it warns too', async () => {
    const { logger, warnings } = recorder()
    const store = redisStore({ url: servers.volatile?.url, logger })
    try {
      await deliver(store, 1)
      await vi.waitFor(() => expect(warnings).toEqual([VOLATILE_WARNING]))
    } finally {
      await store.close()
    }
  })

  it('says nothing with noeviction, with maxmemory 0, or when INFO is refused', async () => {
    // ioredis's own ready check says once that INFO was refused; not the store's line.
    const ioredisWarns = vi.spyOn(console, 'warn').mockImplementation(() => {})
    onTestFinished(() => ioredisWarns.mockRestore())
    for (const name of ['noeviction', 'unlimited', 'hidden']) {
      const { logger, warnings, errors } = recorder()
      const store = redisStore({ url: servers[name]?.url, logger })
      try {
        await deliver(store)
        await settle()
        expect({ name, warnings, errors }).toEqual({ name, warnings: [], errors: [] })
      } finally {
        await store.close()
      }
    }
  })

  it('says nothing with logger: false', async () => {
    const spy = vi.spyOn(console, 'warn').mockImplementation(() => {})
    const store = redisStore({ url: servers.lru?.url, logger: false })
    try {
      await deliver(store, 1)
      await settle()
      expect(spy).not.toHaveBeenCalled()
    } finally {
      spy.mockRestore()
      await store.close()
    }
  })
})

import { randomUUID } from 'node:crypto'
import { redisStore, STREAK_RESET_EVERY_MS } from '@affiliate-webhooks/redis'
import { Cluster, Redis } from 'ioredis'
import { Redis as Redis5 } from 'ioredis5'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import {
  freePort,
  REDIS_URL,
  type RedisCluster,
  type RedisServer,
  startCluster,
  startRedis,
} from '../support/redis-servers.js'
import { storeContract } from './store-contract.js'

const prefix = `aw-redis-store-${randomUUID().slice(0, 8)}:`
const single = new Redis(REDIS_URL)
const single5 = new Redis5(REDIS_URL)

async function removeKeys(client: Redis) {
  let cursor = '0'
  do {
    const [next, found] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
    cursor = next
    if (found.length > 0) await client.unlink(...found)
  } while (cursor !== '0')
}

afterAll(async () => {
  await removeKeys(single)
  single.disconnect()
  single5.disconnect()
})

storeContract(
  'redisStore (single node, ioredis 6)',
  // A case's own prefix (the failure streak's) goes under this file's.
  ({ prefix: own = '', ...options }) =>
    redisStore({ client: single, prefix: prefix + own, ...options }),
  { extend: true },
)
storeContract(
  'redisStore (single node, ioredis 5)',
  ({ prefix: own = '', ...options }) =>
    redisStore({ client: single5 as unknown as Redis, prefix: prefix + own, ...options }),
  { extend: true },
)

describe('redisStore on a 3-master Redis Cluster', () => {
  let cluster: RedisCluster
  let client: Cluster
  beforeAll(async () => {
    cluster = await startCluster()
    client = new Cluster(cluster.nodes)
    await client.ping()
  })
  afterAll(async () => {
    client?.disconnect()
    await cluster?.stop()
  })

  storeContract('redisStore (Cluster)', (options) => redisStore({ client, ...options }), {
    extend: true,
  })

  it('spreads conversions over every master', async () => {
    const store = redisStore({ client })
    for (let id = 0; id < 60; id++) {
      const begun = await store.begin({
        eventId: `evt_spread_${id}`,
        conversionId: id,
        order: 1,
      })
      if (begun.status !== 'claimed') throw new Error(begun.status)
      await store.commit(begun.claim)
    }
    const sizes = await Promise.all(client.nodes('master').map((node) => node.dbsize()))
    expect(sizes).toHaveLength(3)
    for (const size of sizes) expect(size).toBeGreaterThan(0)
  })
})

describe('redisStore details', () => {
  it('counts one failure streak for every store on the same prefix, as two processes would', async () => {
    const shared = `${prefix}streak-${randomUUID().slice(0, 8)}:`
    const a = redisStore({ client: single, prefix: shared })
    const b = redisStore({ client: single5 as unknown as Redis, prefix: shared })
    await a.recordAnswer('signature_mismatch')
    await b.recordAnswer('handler_failed')
    expect(await a.recordAnswer('store_unavailable')).toEqual({
      count: 3,
      recentCodes: ['store_unavailable', 'handler_failed', 'signature_mismatch'],
    })
    // A 2xx answered by either process resets it for both.
    expect((await b.recordAnswer(null)).count).toBe(0)
    expect((await a.recordAnswer('handler_failed')).count).toBe(1)
    await a.recordAnswer(null)
  })

  it('a process that saw no failure resets the shared streak at most once a second', async () => {
    const shared = `${prefix}streak-${randomUUID().slice(0, 8)}:`
    const healthy = redisStore({ client: single, prefix: shared })
    const failing = redisStore({ client: single5 as unknown as Redis, prefix: shared })
    const countKey = `${shared}{streak}:count`
    await healthy.recordAnswer(null)
    await failing.recordAnswer('handler_failed')
    await failing.recordAnswer('handler_failed')
    // Within the second: the healthy process's 2xx does not touch Redis.
    await healthy.recordAnswer(null)
    expect(await single.get(countKey)).toBe('2')
    await new Promise((resolve) => setTimeout(resolve, STREAK_RESET_EVERY_MS + 50))
    await healthy.recordAnswer(null)
    expect(await single.get(countKey)).toBeNull()
    // One that saw the failures itself resets on its next 2xx.
    expect((await failing.recordAnswer('handler_failed')).count).toBe(1)
    await failing.recordAnswer(null)
    expect(await single.get(countKey)).toBeNull()
  })

  it('connects by itself from a url, with the recommended client options', async () => {
    const store = redisStore({ url: REDIS_URL, prefix })
    const begun = await store.begin({ eventId: `evt_url_${prefix}`, order: 1 })
    expect(begun.status).toBe('claimed')
    if (begun.status === 'claimed') expect(await store.commit(begun.claim)).toBe(true)
    expect((await store.begin({ eventId: `evt_url_${prefix}`, order: 1 })).status).toBe('duplicate')
    store.client.disconnect()
  })

  it('wants exactly one of client and url', () => {
    expect(() => redisStore({} as never)).toThrow(/client.*url/)
    expect(() => redisStore({ client: single, url: REDIS_URL })).toThrow(/not both/)
  })

  it('refuses a prefix with braces, which would pin every key to one slot', () => {
    expect(() => redisStore({ client: single, prefix: '{app}:' })).toThrow(TypeError)
  })
})

// SCRIPT FLUSH and CLIENT PAUSE act on a whole server: these run on a redis-server
// of their own, never on the one the other files share.
describe('redisStore on a Redis of its own (SCRIPT FLUSH, CLIENT PAUSE)', () => {
  let server: RedisServer
  let own: Redis
  beforeAll(async () => {
    server = await startRedis()
    own = new Redis(server.url)
  })
  afterAll(async () => {
    own?.disconnect()
    await server?.stop()
  })

  it('writes the documented keys with TTLs, and reloads its scripts after SCRIPT FLUSH', async () => {
    const store = redisStore({ client: own, prefix })
    await own.script('FLUSH')
    const begun = await store.begin({ eventId: 'evt_keys', conversionId: 4242, order: 1000 })
    if (begun.status !== 'claimed') throw new Error(begun.status)
    expect(await own.pttl(`${prefix}{c:4242}:lease:evt_keys`)).toBeGreaterThan(0)
    expect(await own.get(`${prefix}{c:4242}:lock`)).toBe(begun.claim.token)
    await store.commit(begun.claim)
    expect(await own.exists(`${prefix}{c:4242}:lease:evt_keys`, `${prefix}{c:4242}:lock`)).toBe(0)
    expect(await own.get(`${prefix}{c:4242}:wm`)).toBe('1000')
    const doneTtl = await own.pttl(`${prefix}{c:4242}:done:evt_keys`)
    expect(doneTtl).toBeGreaterThan(71 * 3600 * 1000)
    expect(await own.pttl(`${prefix}{c:4242}:wm`)).toBeGreaterThan(89 * 24 * 3600 * 1000)
  })

  it('fails an operation Redis does not answer within operationTimeoutMs, long before Redis answers', async () => {
    const paused = new Redis(server.url)
    const store = redisStore({ client: paused, prefix, operationTimeoutMs: 100 })
    // CLIENT PAUSE stalls every client's writes for 10 s, so the script cannot answer in time.
    await own.client('PAUSE', 10_000, 'ALL')
    try {
      const started = performance.now()
      await expect(store.begin({ eventId: 'evt_slow', order: 1 })).rejects.toThrow(/did not answer/)
      // The bound is the claim: the timeout, not Redis, ended the wait (10 s), with room for a loaded machine.
      expect(performance.now() - started).toBeLessThan(5_000)
    } finally {
      await own.client('UNPAUSE')
      paused.disconnect()
    }
  })
})

describe('redisStore({ url }) logging', () => {
  it('reports a lost Redis once through `logger`, and not at all with logger: false', async () => {
    const url = `redis://127.0.0.1:${await freePort()}`
    const lines: string[] = []
    const logged = redisStore({
      url,
      logger: { warn: (l) => lines.push(l), error: (l) => lines.push(l) },
    })
    const silent = redisStore({ url, logger: false })
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {})
    // Each client's reconnect attempts, counted: "once" is once over several of them.
    const retries = { logged: 0, silent: 0 }
    logged.client.on('reconnecting', () => retries.logged++)
    silent.client.on('reconnecting', () => retries.silent++)
    try {
      await vi.waitFor(
        () => expect(Math.min(retries.logged, retries.silent)).toBeGreaterThanOrEqual(3),
        { timeout: 20_000 },
      )
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatch(/^redisStore: Redis at 127\.0\.0\.1:\d+ unreachable: /)
      expect(spy).not.toHaveBeenCalled()
    } finally {
      logged.client.disconnect()
      silent.client.disconnect()
      spy.mockRestore()
    }
  })
})

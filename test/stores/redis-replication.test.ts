/**
 * `redisStore({ replication })`: the option checked; the store contract kept on
 * a primary with a replica; too few acknowledgements answered 503, never 2xx;
 * the WAIT on connections of its own, off the one every other command shares;
 * on a Cluster, the WAIT sent to the node that holds the event's keys.
 */
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import { affiliateWebhook } from '@affiliate-webhooks/node'
import { type RedisEventStore, redisStore } from '@affiliate-webhooks/redis'
import { Cluster, Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type RedisCluster,
  type RedisServer,
  startCluster,
  startRedis,
} from '../support/redis-servers.js'
import { storeContract } from './store-contract.js'

const REPLICATION = { replicas: 1, timeoutMs: 300 }
let primary: RedisServer
let replica: RedisServer
const stores: RedisEventStore[] = []

beforeAll(async () => {
  primary = await startRedis(['--repl-diskless-sync-delay', '0'])
  replica = await startRedis(['--replicaof', '127.0.0.1', String(primary.port)])
  const probe = new Redis(replica.url)
  while (!(await probe.info('replication')).includes('master_link_status:up')) {
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  probe.disconnect()
})

/** Closes every store made so far (with its client and its WAIT connections). */
const closeStores = () =>
  Promise.all(stores.splice(0).map((store) => store.close({ timeoutMs: 1000 })))

afterAll(async () => {
  await closeStores()
  await replica?.stop()
  await primary?.stop()
})

/** A store with its own client on `url`, closed (with its WAIT connections) after the file. */
function storeOn(url: string, options: Parameters<typeof redisStore>[0] = {}) {
  const client = new Redis(url)
  client.on('error', () => {})
  const store = redisStore({ client, logger: false, ...options })
  stores.push(store)
  return store
}

describe('the replication option', () => {
  it.each([
    [{ replicas: 0, timeoutMs: 500 }, /replication\.replicas.*>= 1.*got 0/],
    [{ replicas: 1.5, timeoutMs: 500 }, /replication\.replicas.*got 1\.5/],
    [{ timeoutMs: 500 }, /replication\.replicas.*got undefined/],
    [{ replicas: 1, timeoutMs: 0 }, /replication\.timeoutMs.*>= 1.*got 0/],
    [{ replicas: 1, timeoutMs: -5 }, /replication\.timeoutMs.*got -5/],
    [{ replicas: 1 }, /replication\.timeoutMs.*got undefined/],
  ])('refuses %j with a message saying what is wrong', (replication, message) => {
    const client = new Redis({ lazyConnect: true })
    expect(() =>
      redisStore({ client, replication: replication as { replicas: number; timeoutMs: number } }),
    ).toThrow(message)
  })
})

describe('redisStore with replication, on a primary with one replica', () => {
  storeContract(
    'redisStore (replication: 1 replica)',
    ({ prefix = 'aw:', ...options }) =>
      storeOn(primary.url, { ...options, prefix, replication: REPLICATION }),
    { extend: true },
  )
})

describe('redisStore with replication, when the replicas do not acknowledge', () => {
  let server: Server
  let url: string
  let alone: RedisServer
  beforeAll(async () => {
    // A primary with no replica at all: every WAIT 1 ends with 0 acknowledgements.
    alone = await startRedis()
    server = createServer(
      affiliateWebhook({
        secret: 'whsec_replication',
        logger: false,
        store: storeOn(alone.url, { replication: REPLICATION }),
        onConversion: async () => {},
      }),
    )
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  })
  afterAll(async () => {
    server?.close()
    await closeStores()
    await alone?.stop()
  })

  it('answers the delivery 503 store_unavailable, never 2xx', async () => {
    const event = buildConversionEvent({ conversion: { id: 4801 } })
    const { headers, body } = await signedDelivery({ secret: 'whsec_replication', event })
    const response = await fetch(url, { method: 'POST', headers, body })
    expect(response.status).toBe(503)
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
      'store_unavailable',
    )
  })

  it('refuses a duplicate answer from a mark it cannot see replicated', async () => {
    // The mark written without replication (as by a receiver that does not wait).
    const plain = storeOn(alone.url)
    const begun = await plain.begin({ eventId: 'evt_marked', conversionId: 4802, order: 1 })
    if (begun.status !== 'claimed') throw new Error(begun.status)
    expect(await plain.commit(begun.claim)).toBe(true)
    expect(
      (await plain.begin({ eventId: 'evt_marked', conversionId: 4802, order: 1 })).status,
    ).toBe('duplicate')
    const gated = storeOn(alone.url, { replication: REPLICATION })
    await expect(
      gated.begin({ eventId: 'evt_marked', conversionId: 4802, order: 1 }),
    ).rejects.toThrow(/0 of 1 replica\(s\) acknowledged/)
    await expect(
      gated.begin({ eventId: 'evt_older', conversionId: 4802, order: 0 }),
    ).rejects.toThrow(/0 of 1 replica/)
    await expect(
      gated.peek({ eventId: 'evt_marked', conversionId: 4802, order: 1 }),
    ).rejects.toThrow(/0 of 1 replica/)
  })

  it("takes neither the client's lazyConnect nor its commandTimeout: the WAIT runs its whole timeout", async () => {
    // As with recommendedRedisOptions' commandTimeout: a copy that kept it would
    // cut the WAIT at 100 ms ("Command timed out"); one that kept lazyConnect
    // would never connect and end at the gate's bound instead.
    const client = new Redis(alone.url, { lazyConnect: true, commandTimeout: 100 })
    client.on('error', () => {})
    const store = redisStore({
      client,
      logger: false,
      replication: { replicas: 1, timeoutMs: 400 },
    })
    stores.push(store)
    const begun = await store.begin({ eventId: 'evt_lazy', conversionId: 4805, order: 1 })
    if (begun.status !== 'claimed') throw new Error(begun.status)
    await expect(store.commit(begun.claim)).rejects.toThrow(
      /0 of 1 replica\(s\) acknowledged the store's writes within 400 ms/,
    )
  })

  it('after close, an operation is refused at once and opens no connection', async () => {
    const store = storeOn(alone.url, { replication: { replicas: 1, timeoutMs: 100 } })
    const begun = await store.begin({ eventId: 'evt_closed', conversionId: 4806, order: 1 })
    if (begun.status !== 'claimed') throw new Error(begun.status)
    await store.close({ timeoutMs: 1000 })
    await expect(store.commit(begun.claim)).rejects.toThrow()
  })

  it('past its 32 connections, operations wait for one and still end, refused', async () => {
    const store = storeOn(alone.url, { replication: { replicas: 1, timeoutMs: 100 } })
    // Other stores' gate connections on this server, idle after their WAIT.
    const waitsIn = async () =>
      ((await (store.client as Redis).client('LIST')) as string).match(/cmd=wait/g)?.length ?? 0
    const before = await waitsIn()
    const claims = await Promise.all(
      Array.from({ length: 40 }, async (_, n) => {
        const begun = await store.begin({
          eventId: `evt_many_${n}`,
          conversionId: 5000 + n,
          order: 1,
        })
        if (begun.status !== 'claimed') throw new Error(begun.status)
        return begun.claim
      }),
    )
    const ends = await Promise.allSettled(claims.map((claim) => store.commit(claim)))
    expect(ends.map((end) => end.status === 'rejected' && String(end.reason))).toEqual(
      claims.map(() => expect.stringMatching(/0 of 1 replica/)),
    )
    expect((await waitsIn()) - before).toBe(32)
  })

  it('waits on a connection of its own: a blocked WAIT delays no other store command', async () => {
    const store = storeOn(alone.url, { replication: { replicas: 1, timeoutMs: 1500 } })
    const begun = await store.begin({ eventId: 'evt_waits', conversionId: 4803, order: 1 })
    if (begun.status !== 'claimed') throw new Error(begun.status)
    const settled: string[] = []
    const commit = Promise.resolve(store.commit(begun.claim)).then(
      () => settled.push('commit'),
      () => settled.push('commit refused'),
    )
    // Sent while the commit's WAIT blocks its connection: answered first.
    const other = await store.begin({ eventId: 'evt_other', conversionId: 4804, order: 1 })
    settled.push(`begin ${other.status}`)
    await commit
    expect(settled).toEqual(['begin claimed', 'commit refused'])
    // The WAIT ran on another connection than the store's client.
    const waits = (await store.client.info('commandstats')).match(/cmdstat_wait:calls=(\d+)/)
    expect(Number(waits?.[1])).toBeGreaterThan(0)
    const clients = await (store.client as Redis).client('LIST')
    const own = await (store.client as Redis).client('ID')
    expect(clients).toMatch(/cmd=wait/)
    expect(clients).not.toMatch(new RegExp(`id=${own} .*cmd=wait`))
  })
})

describe('redisStore with replication on a Cluster', () => {
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

  it('sends the WAIT to the master that holds the event, in the same pipeline', async () => {
    const store = redisStore({ client, logger: false, replication: REPLICATION })
    const conversionId = 4805
    const slot = await client.cluster('KEYSLOT', `aw:{c:${conversionId}}:wm`)
    const holder = (await client.cluster('SLOTS')).find(
      ([from, to]) => (from as number) <= slot && slot <= (to as number),
    )?.[2] as unknown as [string, number]
    const waitsOn = async (port: number) => {
      const node = new Redis({ port })
      const found = (await node.info('commandstats')).match(/cmdstat_wait:calls=(\d+)/)
      node.disconnect()
      return Number(found?.[1] ?? 0)
    }
    const before = await Promise.all(cluster.nodes.map((n) => waitsOn(n.port)))
    const begun = await store.begin({ eventId: 'evt_cluster', conversionId, order: 1 })
    if (begun.status !== 'claimed') throw new Error(begun.status)
    // The masters have no replicas: the WAIT ran and was answered 0.
    await expect(store.commit(begun.claim)).rejects.toThrow(/0 of 1 replica/)
    const after = await Promise.all(cluster.nodes.map((n) => waitsOn(n.port)))
    const grown = cluster.nodes.filter((_, i) => (after[i] as number) > (before[i] as number))
    expect(grown.map((n) => n.port)).toEqual([holder[1]])
    await store.close({ timeoutMs: 1000 })
  })
})

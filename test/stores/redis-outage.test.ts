/**
 * Redis killed mid-stream and restarted: 503 while it is down, nothing
 * acknowledged that was not handled, everything acknowledged after.
 */
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { affiliateWebhook } from '@affiliate-webhooks/node'
import { recommendedRedisOptions, redisStore } from '@affiliate-webhooks/redis'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Answer, deliverAll } from '../emulator/delivery-loop.js'
import { lifecycles, random } from '../emulator/lifecycles.js'
import { type RedisServer, startRedis } from '../support/redis-servers.js'

const SECRET = 'whsec_outage'
let redis: RedisServer
let client: Redis
let server: Server
let url: string
const handled: string[] = []

beforeAll(async () => {
  // appendfsync always: what was committed before the crash survives it.
  redis = await startRedis(['--appendonly', 'yes', '--appendfsync', 'always'])
  client = new Redis(redis.url, { ...recommendedRedisOptions, retryStrategy: () => 50 })
  client.on('error', () => {})
  server = createServer(
    affiliateWebhook({
      secret: SECRET,
      // The real service retries after a minute, past the default 30 s lease; this
      // sender retries within milliseconds, so a lease taken just before the crash
      // must run out sooner.
      // The outage (600 ms) outlasts an operation's wait for the reconnect (200 ms),
      // so requests in the middle of it must answer 503.
      store: redisStore({ client, operationTimeoutMs: 200, leaseMs: 1000 }),
      onConversion: async (_conversion, event) => {
        await new Promise((resolve) => setTimeout(resolve, 2))
        handled.push(event.id)
      },
    }),
  )
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
})

afterAll(async () => {
  server.close()
  client.disconnect()
  await redis.stop()
})

describe('Redis outage', () => {
  it('answers 503 while Redis is down and acknowledges everything once it is back', async () => {
    const events = lifecycles(40, random(7))
    let acknowledged = 0
    let killedAt = Number.POSITIVE_INFINITY
    let restartedAt = Number.POSITIVE_INFINITY
    let outage: Promise<void> | undefined
    const onAnswer = (answer: Answer) => {
      if (answer.status === 200) acknowledged++
      if (acknowledged === 30 && outage === undefined) {
        outage = (async () => {
          await redis.kill()
          killedAt = Date.now()
          await new Promise((resolve) => setTimeout(resolve, 600))
          restartedAt = Date.now()
          await redis.restart()
        })()
      }
    }
    const answers = await deliverAll(events, {
      secret: SECRET,
      url: () => url,
      concurrency: 8,
      onAnswer,
    })
    await outage

    const during = answers.filter((a) => a.startedAt > killedAt && a.endedAt < restartedAt)
    expect(during.length).toBeGreaterThan(0)
    for (const answer of during) {
      expect(answer.status).toBe(503)
      expect(answer.code).toBe('store_unavailable')
    }
    // Never a 2xx for an event that was not handled (or judged duplicate/stale).
    for (const answer of answers.filter((a) => a.outcome === 'processed')) {
      expect(handled).toContain(answer.eventId)
    }
    const acked = new Set(answers.filter((a) => a.status === 200).map((a) => a.eventId))
    expect(acked.size).toBe(events.length)
    expect(answers.some((a) => a.status === 200 && a.startedAt > restartedAt)).toBe(true)
  })
})

describe('a short Redis restart', () => {
  it('is ridden out: requests wait for the reconnect within operationTimeoutMs', async () => {
    const own = await startRedis()
    const client = new Redis(own.url, { ...recommendedRedisOptions, retryStrategy: () => 20 })
    client.on('error', () => {})
    const store = redisStore({ client, operationTimeoutMs: 3000 })
    await store.begin({ eventId: 'evt_warm', order: 1 })
    await own.kill()
    // A command already on the wire when Redis dies fails (a 503, rightly); this is
    // about the ones sent once the client knows and is reconnecting.
    while (client.status === 'ready') await new Promise((resolve) => setTimeout(resolve, 5))
    const restarting = new Promise((resolve) => setTimeout(resolve, 300)).then(() => own.restart())
    // Sent while Redis is down: it waits for the reconnect instead of failing.
    const begun = await store.begin({ eventId: 'evt_during_restart', order: 1 })
    expect(begun.status).toBe('claimed')
    await restarting
    client.disconnect()
    await own.stop()
  })
})

describe('Redis outage with a client on ioredis defaults', () => {
  it('still fails within operationTimeoutMs instead of queueing until Redis returns', async () => {
    const own = await startRedis()
    const queued = new Redis(own.url)
    queued.on('error', () => {})
    await queued.ping()
    await own.kill()
    const store = redisStore({ client: queued, operationTimeoutMs: 300 })
    const started = Date.now()
    await expect(store.begin({ eventId: 'evt_queued', order: 1 })).rejects.toThrow()
    expect(Date.now() - started).toBeLessThan(1500)
    queued.disconnect()
    await own.stop()
  })
})

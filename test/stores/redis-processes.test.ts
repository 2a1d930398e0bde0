/**
 * Several receiver processes sharing one Redis, fed a shuffled stream of
 * conversion lifecycles with duplicates at high concurrency: each event handled
 * once, never an older status after a newer one, every event acknowledged.
 */
import { type ChildProcess, fork } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { once } from 'node:events'
import type { ConversionEvent } from '@affiliate-webhooks/core'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deliverAll } from '../emulator/delivery-loop.js'
import { lifecycles, random, shuffle } from '../emulator/lifecycles.js'
import { REDIS_URL } from '../support/redis-servers.js'

const SECRET = 'whsec_multi_process'
const PREFIX = `aw-mp-${randomUUID().slice(0, 8)}:`
const redis = new Redis(REDIS_URL)
const children: ChildProcess[] = []
const urls: string[] = []

beforeAll(async () => {
  for (let n = 0; n < 3; n++) {
    const child = fork(new URL('./receiver-process.mjs', import.meta.url), {
      env: {
        ...process.env,
        REDIS_URL,
        WEBHOOK_SECRET: SECRET,
        KEY_PREFIX: PREFIX,
        FAIL_FIRST_RATE: '0.15',
      },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    children.push(child)
    const [message] = (await once(child, 'message')) as [{ port: number }]
    urls.push(`http://127.0.0.1:${message.port}/`)
  }
})

afterAll(async () => {
  for (const child of children) child.kill('SIGTERM')
  const keys = await redis.keys(`${PREFIX}*`)
  if (keys.length > 0) await redis.unlink(...keys)
  redis.disconnect()
})

describe('three receiver processes sharing one Redis', () => {
  it('handle each event once, in order per conversion, and acknowledge everything', async () => {
    const rand = random(20261121)
    const events = lifecycles(80, rand)
    // About a third of the events are delivered twice more (retries, replays).
    const deliveries = shuffle(
      events.flatMap((e) => (rand() < 0.35 ? [e, e, e] : [e])),
      rand,
    )
    const answers = await deliverAll(deliveries, {
      secret: SECRET,
      url: () => urls[Math.floor(Math.random() * urls.length)] as string,
      concurrency: 64,
    })

    const handled = await redis.lrange(`${PREFIX}handled`, 0, -1)
    expect(new Set(handled).size).toBe(handled.length)

    const newest = new Map<number, ConversionEvent>()
    for (const e of events) {
      const prev = newest.get(e.data.conversion.id)
      if (!prev || prev.createdAt < e.createdAt) newest.set(e.data.conversion.id, e)
    }
    for (const [id, last] of newest) {
      const log = await redis.lrange(`${PREFIX}log:${id}`, 0, -1)
      const times = log.map((entry) => entry.split('|')[0] as string)
      expect(times, `conversion ${id} went backwards`).toEqual([...times].sort())
      expect(new Set(times).size).toBe(times.length)
      expect(log.at(-1)).toBe(`${last.createdAt}|${last.data.conversion.status}`)
    }

    // Every delivery ended acknowledged; every "processed" was a handled event.
    const acknowledged = new Set(answers.filter((a) => a.status === 200).map((a) => a.eventId))
    expect(acknowledged.size).toBe(events.length)
    const processed = answers.filter((a) => a.outcome === 'processed').map((a) => a.eventId)
    expect(new Set(processed)).toEqual(new Set(handled))
    const statuses = new Set(answers.map((a) => a.status))
    // The stream really exercised retries (flaky handlers answered 500), stale and duplicate events.
    expect(statuses.has(500)).toBe(true)
    expect(answers.some((a) => a.outcome === 'stale')).toBe(true)
    expect(answers.some((a) => a.outcome === 'duplicate')).toBe(true)
  })
})

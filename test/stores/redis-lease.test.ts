/**
 * A handler slower than the lease: the retry proceeds, and the slow attempt's
 * late commit changes nothing in Redis.
 */
import { randomUUID } from 'node:crypto'
import { createReceiver } from '@affiliate-webhooks/core'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import { redisStore } from '@affiliate-webhooks/redis'
import { Redis } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'
import { REDIS_URL } from '../support/redis-servers.js'

const SECRET = 'whsec_lease'
const prefix = `aw-lease-${randomUUID().slice(0, 8)}:`
const client = new Redis(REDIS_URL)

afterAll(async () => {
  const keys = await client.keys(`${prefix}*`)
  if (keys.length > 0) await client.unlink(...keys)
  client.disconnect()
})

const input = async (event: object, attempt: number) => {
  const { headers, body } = await signedDelivery({ secret: SECRET, event, attempt })
  return { headers, rawBody: Buffer.from(body) }
}

/** Resolves once `condition` holds; fails after 10 s. */
async function until(condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met within 10 s')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe('redisStore lease expiry', () => {
  it('lets the retry run when a handler outlives its lease; the late commit changes nothing', async () => {
    const conversionId = Math.floor(Math.random() * 1e9)
    const event = buildConversionEvent({ createdAt: 5_000, conversion: { id: conversionId } })
    const calls: number[] = []
    let releaseSlow!: () => void
    const slowDone = new Promise<void>((resolve) => {
      releaseSlow = resolve
    })
    const receiver = createReceiver({
      secret: SECRET,
      store: redisStore({ client, prefix, leaseMs: 200 }),
      onConversion: async (_conversion, handledEvent, ctx) => {
        calls.push(ctx.attempt ?? 0)
        if (handledEvent.id === event.id && ctx.attempt === 1) await slowDone
      },
    })
    const tag = `${prefix}{c:${conversionId}}`

    const slow = receiver.receive(await input(event, 1))
    // Waits by condition, not by a fixed pause: the slow handler has started, and
    // then its 200 ms lease has run out in Redis.
    await until(async () => calls.length === 1)
    await until(async () => (await client.exists(`${tag}:lease:${event.id}`)) === 0)
    expect((await receiver.receive(await input(event, 2))).outcome).toBe('processed')
    const doneTtlBefore = await client.pttl(`${tag}:done:${event.id}`)
    // The watermark is the ordering key: createdAt in µs, times two, +1 for updated.
    expect(await client.get(`${tag}:wm`)).toBe(String(5_000 * 1000 * 2))

    // A newer event of the same conversion is handled before the slow attempt ends.
    const newer = buildConversionEvent({
      type: 'conversion.updated',
      createdAt: 9_000,
      conversion: { id: conversionId },
    })
    expect((await receiver.receive(await input(newer, 1))).outcome).toBe('processed')

    releaseSlow()
    await slow
    expect(calls).toEqual([1, 2, 1])
    expect(await client.get(`${tag}:wm`)).toBe(String(9_000 * 1000 * 2 + 1))
    expect(await client.pttl(`${tag}:done:${event.id}`)).toBeLessThanOrEqual(doneTtlBefore)
    expect(await client.exists(`${tag}:lock`, `${tag}:lease:${event.id}`)).toBe(0)
    expect((await receiver.receive(await input(event, 3))).outcome).toBe('duplicate')
  })
})

describe('redisStore lease renewal', () => {
  it('tries a renewal that failed again within the lease: a copy 1.1 s later gets 409, never a second run', async () => {
    const base = redisStore({ client, prefix })
    let renewals = 0
    // The first renewal is lost on its way (a dropped round trip); the next ones go through.
    const store: typeof base = {
      ...base,
      extend: async (claim, leaseMs) => {
        renewals++
        if (renewals === 1) throw new Error('Connection is closed.')
        return (await base.extend?.(claim, leaseMs)) ?? false
      },
    }
    let calls = 0
    let finish!: () => void
    const finished = new Promise<void>((resolve) => {
      finish = resolve
    })
    const receiver = createReceiver({
      secret: SECRET,
      store,
      leaseMs: 600,
      answerWithinMs: 100,
      logger: false,
      onConversion: async () => {
        calls++
        await finished
      },
    })
    const event = buildConversionEvent({ conversion: { id: Math.floor(Math.random() * 1e9) } })
    expect((await receiver.receive(await input(event, 1))).error?.code).toBe('handler_timeout')
    await new Promise((resolve) => setTimeout(resolve, 1_100))
    const copy = await receiver.receive(await input(event, 2))
    expect(copy).toMatchObject({ status: 409, error: { code: 'event_in_progress' } })
    expect(calls).toBe(1)
    expect(renewals).toBeGreaterThanOrEqual(3)
    finish()
    await until(async () => (await receiver.receive(await input(event, 3))).outcome === 'duplicate')
    expect(calls).toBe(1)
  })
})

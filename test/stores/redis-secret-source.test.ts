/**
 * redisSecretSource on the machine's Redis: rotation with a grace period, and two
 * receivers (as two processes behind a load balancer would be) picking up a
 * rotation made elsewhere at their next delivery, with no restart.
 */
import { randomUUID } from 'node:crypto'
import { createReceiver } from '@affiliate-webhooks/core'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import { redisSecretSource } from '@affiliate-webhooks/redis'
import { Redis } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'
import { REDIS_URL } from '../support/redis-servers.js'

const prefix = `aw-secret-source-${randomUUID().slice(0, 8)}:`
const client = new Redis(REDIS_URL)
const A = 'whsec_secret_a'
const B = 'whsec_secret_b'
const C = 'whsec_secret_c'

afterAll(async () => {
  const keys = await client.keys(`${prefix}*`)
  if (keys.length > 0) await client.unlink(...keys)
  client.disconnect()
})

describe('redisSecretSource', () => {
  it('rotate puts the new secret first and keeps the others for the grace period only', async () => {
    const clock = { ms: 1_000_000 }
    const endpointId = `we_${randomUUID()}`
    const source = redisSecretSource({
      client,
      prefix,
      endpointId,
      now: () => clock.ms,
    })
    expect(await source.getSecrets()).toEqual([])
    await source.set([A])
    await source.rotate(B, { graceMs: 1_000 })
    expect(await source.getSecrets()).toEqual([B, A])
    clock.ms += 500
    // A second rotation never extends A's expiry, and keeps B for its own grace.
    await source.rotate(C, { graceMs: 60_000 })
    expect(await source.getSecrets()).toEqual([C, B, A])
    clock.ms += 501
    expect(await source.getSecrets()).toEqual([C, B])
    clock.ms += 60_000
    expect(await source.getSecrets()).toEqual([C])
    expect(source.key).toBe(`${prefix}secrets:{${endpointId}}`)
  })

  it('refuses a secret that is not whsec_, and an endpoint id with braces', async () => {
    const source = redisSecretSource({ client, prefix, endpointId: 'we_x' })
    await expect(source.rotate('no-prefix')).rejects.toThrow(/whsec_/)
    expect(() => redisSecretSource({ client, prefix, endpointId: 'a{b}' })).toThrow(/braces/)
    expect(() => redisSecretSource({ prefix, endpointId: 'we_x' })).toThrow(
      /`client`.*or `url` is required/,
    )
  })

  it('two receivers pick up a rotation written elsewhere, without a restart', async () => {
    const endpointId = `we_${randomUUID()}`
    const writer = redisSecretSource({ client, prefix, endpointId })
    await writer.set([A])
    const handled: string[] = []
    const receivers = [1, 2].map((n) =>
      createReceiver({
        secret: redisSecretSource({ client, prefix, endpointId, refreshIntervalMs: 5_000 }),
        onConversion: (_, event) => {
          handled.push(`${n}:${event.id}`)
        },
      }),
    )
    const deliver = async (secret: string, to: number) => {
      const signed = await signedDelivery({ secret, event: buildConversionEvent() })
      const answer = await receivers[to]?.receive({
        headers: signed.headers,
        rawBody: new TextEncoder().encode(signed.body),
      })
      return answer?.status
    }
    expect(await deliver(A, 0)).toBe(200)
    expect(await deliver(A, 1)).toBe(200)
    await writer.rotate(B, { graceMs: 60_000 })
    expect(await deliver(B, 0)).toBe(200)
    expect(await deliver(B, 1)).toBe(200)
    // Deliveries signed before the switch still verify during the grace period.
    expect(await deliver(A, 1)).toBe(200)
    expect(handled).toHaveLength(5)
  })

  it('a source made from a url waits for its connection: rotate and the first delivery right after creation work', async () => {
    const endpointId = `we_${randomUUID()}`
    const fresh = redisSecretSource({ url: REDIS_URL, prefix, endpointId, logger: false })
    try {
      // Before: ioredis refused this with "Stream isn't writeable and enableOfflineQueue options is false".
      await fresh.rotate(A)
      expect(await client.get(fresh.key)).toContain(A)
    } finally {
      fresh.client.disconnect()
    }
    const source = redisSecretSource({ url: REDIS_URL, prefix, endpointId, logger: false })
    const receiver = createReceiver({ secret: source, logger: false, onConversion: () => {} })
    try {
      const signed = await signedDelivery({ secret: A, event: buildConversionEvent() })
      const answer = await receiver.receive({
        headers: signed.headers,
        rawBody: new TextEncoder().encode(signed.body),
      })
      expect(answer.status).toBe(200)
    } finally {
      source.client.disconnect()
    }
  })

  it('a url no Redis answers fails within the bound, with a clear message', async () => {
    const source = redisSecretSource({
      url: 'redis://127.0.0.1:1',
      endpointId: 'we_x',
      logger: false,
      connectTimeoutMs: 300,
    })
    try {
      const started = Date.now()
      await expect(source.getSecrets()).rejects.toThrow(
        `reading Redis key ${source.key}: redisSecretSource: no connection to Redis within 300 ms`,
      )
      expect(Date.now() - started).toBeLessThan(2_000)
    } finally {
      source.client.disconnect()
    }
  })

  it('secret_unavailable names the Redis key it read and the command that fills it', async () => {
    const endpointId = `we_${randomUUID()}`
    const source = redisSecretSource({ client, prefix, endpointId })
    const lines: string[] = []
    const logger = {
      warn: (line: string) => lines.push(line),
      error: (line: string) => lines.push(line),
    }
    const receiver = createReceiver({ secret: source, logger, onConversion: () => {} })
    const signed = await signedDelivery({ secret: A, event: buildConversionEvent() })
    const answer = await receiver.receive({
      headers: signed.headers,
      rawBody: new TextEncoder().encode(signed.body),
    })
    expect(answer.status).toBe(503)
    expect(answer.error?.code).toBe('secret_unavailable')
    expect(lines.join('\n')).toContain(
      `Redis key ${source.key} holds none; store the endpoint's secret there with: affiliate-webhooks secrets put ${endpointId} --redis <url>`,
    )
    // The answer the service keeps says what failed, not where the secrets live.
    expect(answer.body).not.toContain(source.key)
  })
})

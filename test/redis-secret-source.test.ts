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
import { REDIS_URL } from './redis-servers.js'

const prefix = `aw-test-${randomUUID().slice(0, 8)}:`
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
    const source = redisSecretSource({
      client,
      prefix,
      endpointId: `we_${randomUUID()}`,
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
    expect(source.key).toMatch(/^aw-test-.*secrets:\{we_.*\}$/)
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
})

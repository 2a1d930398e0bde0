/**
 * Zero-downtime rotation end to end: two receiver processes behind a load
 * balancer read the endpoint's secrets from Redis (redisSecretSource); a steady
 * stream of conversions flows from the emulator while `affiliate-webhooks rotate`
 * runs as a real process. No event is lost (each is handled, or answered stale
 * once its conversion's newer event was), none handled twice, and no delivery
 * ends failed.
 */
import { type ChildProcess, fork } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { once } from 'node:events'
import { createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { createClient, type Delivery } from '@affiliate-webhooks/client'
import { createClock } from '@affiliate-webhooks/emulator'
import { Redis } from 'ioredis'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { conversion, HOUR, startEmulator } from '../support/emulator-harness.js'
import { REDIS_URL } from '../support/redis-servers.js'
import { run } from '../support/run-process.js'

const root = new URL('../..', import.meta.url).pathname
const BIN = join(root, 'packages/cli/bin/affiliate-webhooks.js')
const KEY = `la_${'r'.repeat(32)}`
const PREFIX = `aw-rot-${randomUUID().slice(0, 8)}:`
const redis = new Redis(REDIS_URL)
const children: ChildProcess[] = []
const cleanup: (() => unknown)[] = []
const secretKeys: string[] = []

afterAll(async () => {
  for (const child of children) child.kill('SIGTERM')
  for (const step of cleanup) await step()
  // The CLI keeps secrets at aw:secrets:{<endpoint id>}: only the keys of endpoints made here.
  const keys = [...(await redis.keys(`${PREFIX}*`)), ...secretKeys]
  if (keys.length > 0) await redis.unlink(...keys)
  redis.disconnect()
})

const cli = (args: string[], env: Record<string, string>) =>
  run(process.execPath, [BIN, ...args], { env })

/** A round-robin load balancer in front of the receiver processes. */
async function loadBalancer(ports: number[]) {
  let next = 0
  const server = createServer((req, res) => {
    const port = ports[next++ % ports.length]
    const upstream = request(
      { host: '127.0.0.1', port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      },
    )
    upstream.on('error', () => {
      res.writeHead(502)
      res.end()
    })
    req.pipe(upstream)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  cleanup.push(() => new Promise((done) => server.close(done)))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`
}

describe('rotate with two receiver processes under a steady stream', () => {
  it("loses no event (each is handled, or answered stale behind its conversion's newer event), handles none twice, and leaves no delivery failed", async () => {
    const h = await startEmulator({
      apiKeys: [KEY],
      clock: createClock({ start: Date.UTC(2026, 0, 5, 10) }),
    })
    cleanup.push(() => h.close())
    const env = { AFFILIATE_API_URL: h.base, AFFILIATE_API_KEY: KEY }
    const ports: number[] = []
    const url = await loadBalancer(ports)

    const created = await cli(['endpoints', 'create', '--url', url, '--redis', REDIS_URL], env)
    expect(created.code, created.stderr).toBe(0)
    expect(created.stdout).not.toMatch(/whsec_/)
    const id = /^id\s+(\S+)$/m.exec(created.stdout)?.[1] as string
    secretKeys.push(`aw:secrets:{${id}}`)

    for (let n = 0; n < 2; n++) {
      const child = fork(new URL('./receiver-process.mjs', import.meta.url), {
        env: { ...process.env, REDIS_URL, ENDPOINT_ID: id, KEY_PREFIX: PREFIX },
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      })
      children.push(child)
      const [message] = (await once(child, 'message')) as [{ port: number }]
      ports.push(message.port)
    }

    const emitted: { eventId: string; conversionId: number; status: string }[] = []
    const emit = async (conversionId: number, status: string) => {
      const reply = await h.call('POST', '/emulator/conversions', {
        body: conversion(conversionId, status),
      })
      const event = reply.body.data.event
      if (event) emitted.push({ eventId: event.id, conversionId, status })
    }
    // Every minute of service time: a new conversion and a status change, then the batch goes out.
    // The rotation runs while minutes 12 to 19 go by, and is over before minute 20:
    // the last ten minutes are signed with the new secret only.
    //
    // The CLI rotates at the service, then writes the new secret to Redis: between
    // the two, deliveries are refused and retried. That moment is milliseconds
    // against the service's minute-long batches; here a minute passes as fast as
    // the test can advance the clock, so the clock waits for the moment to end
    // (otherwise, on a loaded machine, it raced through minutes of refusals and
    // the service disabled the endpoint after 20 failed attempts in a row).
    const serviceSecret = () =>
      h.emulator.engine.snapshot().endpoints.find((e) => e.id === id)?.secret
    const redisHasServiceSecret = async () => {
      const kept = JSON.parse((await redis.get(`aw:secrets:{${id}}`)) ?? '[]') as {
        secret: string
      }[]
      return kept.some((entry) => entry.secret === serviceSecret())
    }
    let rotation: ReturnType<typeof cli> | undefined
    let afterRotation = 0
    for (let step = 1; step <= 30; step++) {
      if (step === 12) rotation = cli(['rotate', id, '--redis', REDIS_URL, '--grace', '10m'], env)
      if (step === 20) await rotation
      if (step >= 20) afterRotation++
      await emit(step, 'pending')
      if (step > 1) await emit(step - 1, 'approved')
      await vi.waitFor(async () => expect(await redisHasServiceSecret()).toBe(true), {
        timeout: 30_000,
        interval: 10,
      })
      await h.advance(61_000)
    }
    expect(afterRotation).toBe(11)
    const rotated = await rotation
    expect(rotated?.code, rotated?.stderr).toBe(0)
    expect(rotated?.stdout).toMatch(/secret rotated/)
    expect(rotated?.stdout).not.toMatch(/whsec_/)
    // Redis holds the service's new secret first and the old one for the grace period.
    const current = h.emulator.engine.snapshot().endpoints.find((e) => e.id === id)?.secret
    const stored = JSON.parse((await redis.get(`aw:secrets:{${id}}`)) ?? '[]')
    expect(stored).toHaveLength(2)
    expect(stored[0]).toEqual({ secret: current })
    expect(stored[1]).toMatchObject({ expiresAt: expect.any(Number) })
    // The rest of any retry schedule.
    await h.advance(50 * HOUR)

    const handled = await redis.lrange(`${PREFIX}handled`, 0, -1)
    expect(handled.length).toBe(new Set(handled).size)
    const api = createClient({ apiKey: KEY, baseUrl: h.base })
    const deliveries: Delivery[] = []
    for await (const delivery of api.webhooks.deliveries(id)) deliveries.push(delivery)
    expect(deliveries).toHaveLength(emitted.length)
    expect(deliveries.filter((d) => d.status !== 'succeeded')).toEqual([])
    expect((await api.webhooks.get(id)).status).toBe('active')
    // Each conversion's newest event was handled. An older one may not have
    // been: a delivery refused in the moment between the service's rotation and
    // the new secret reaching Redis is retried a minute later, in the batch of
    // its conversion's next event, and if that newer event wins, the older is
    // answered stale (acknowledged, not run), as the store's ordering says.
    const newest = new Map(emitted.map((e) => [e.conversionId, e.eventId]))
    expect([...newest.values()].filter((eventId) => !handled.includes(eventId))).toEqual([])
    const delivered = new Map(deliveries.map((d) => [d.eventId, d]))
    const unhandled = emitted.filter((e) => !handled.includes(e.eventId))
    for (const event of unhandled) {
      const delivery = delivered.get(event.eventId)
      expect(event.status).toBe('pending')
      expect(JSON.parse(delivery?.responseBody ?? '{}')).toEqual({
        received: true,
        outcome: 'stale',
      })
      expect(delivery?.attempts).toBeGreaterThan(1)
    }
    expect(handled.length + unhandled.length).toBe(emitted.length)
  }, 90_000)
})

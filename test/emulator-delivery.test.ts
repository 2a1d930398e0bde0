/**
 * The emulator's delivery engine, driven through its API with POST /emulator/clock:
 * receivers are this project's node adapter on real sockets with the memory store.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { AnyWebhookEvent } from '@affiliate-webhooks/core'
import { memoryStore } from '@affiliate-webhooks/core'
import { type AttemptLogEntry, RETRY_SCHEDULE_MS } from '@affiliate-webhooks/emulator'
import { affiliateWebhook } from '@affiliate-webhooks/node'
import { afterEach, describe, expect, it } from 'vitest'
import {
  answer,
  conversion,
  type Harness,
  type Receiver,
  startEmulator,
  startReceiver,
  WHOLE_SCHEDULE_MS,
} from './emulator-harness.js'

const open: { close(): Promise<void> }[] = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((thing) => thing.close()))
})
async function emulator(options: Parameters<typeof startEmulator>[0] = {}): Promise<Harness> {
  const harness = await startEmulator(options)
  open.push(harness)
  return harness
}
async function receiver(): Promise<Receiver> {
  const started = await startReceiver()
  open.push(started)
  return started
}

/** An entry of GET /emulator/log: the engine's, with `at` as an ISO time. */
type LogEntry = Omit<AttemptLogEntry, 'at'> & { at: string }
const readLog = async (h: Harness): Promise<LogEntry[]> =>
  (await h.call('GET', '/emulator/log')).body.data
const emit = (h: Harness, id: number, status = 'pending') =>
  h.call('POST', '/emulator/conversions', { body: conversion(id, status) })
const deliveries = async (h: Harness, webhookId: string) =>
  (await h.call('GET', `/v1/webhooks/${webhookId}/deliveries?size=100`)).body.data
const endpointOf = async (h: Harness, webhookId: string) =>
  (await h.call('GET', `/v1/webhooks/${webhookId}`)).body.data

describe('emulator delivery engine', () => {
  it('retries on the schedule: a handler failing five times then succeeding gets six attempts, spaced 1m, 5m, 30m, 2h, 6h', async () => {
    const h = await emulator()
    const rx = await receiver()
    const endpoint = await h.register(rx.url)
    const attempts: (number | null)[] = []
    rx.use(
      affiliateWebhook({
        secret: endpoint.secret,
        store: memoryStore(),
        onConversion(_conversion, _event, ctx) {
          attempts.push(ctx.attempt)
          if (attempts.length <= 5) throw new Error('not yet')
        },
      }),
    )
    const emitted = await emit(h, 1)
    const advanced = await h.advance(WHOLE_SCHEDULE_MS)
    expect(advanced.status).toBe(200)
    expect(attempts).toEqual([1, 2, 3, 4, 5, 6])
    const log = await readLog(h)
    expect(log.map((e) => [e.attempt, e.ok, e.responseStatus])).toEqual([
      [1, false, 500],
      [2, false, 500],
      [3, false, 500],
      [4, false, 500],
      [5, false, 500],
      [6, true, 200],
    ])
    for (const entry of log) expect(entry.eventId).toBe(emitted.body.data.event.id)
    const times = log.map((e) => Date.parse(e.at))
    for (let i = 1; i < times.length; i++) {
      const gap = (times[i] as number) - (times[i - 1] as number)
      const offset = RETRY_SCHEDULE_MS[i - 1] as number
      // Offsets count from the previous attempt; its own duration may add a little.
      expect(gap).toBeGreaterThanOrEqual(offset)
      expect(gap).toBeLessThan(offset + 5_000)
    }
    const [delivery] = await deliveries(h, endpoint.id)
    expect(delivery).toMatchObject({
      status: 'succeeded',
      attempts: 6,
      responseStatus: 200,
      nextAttemptAt: null,
    })
    expect(delivery.responseBody).toContain('processed')
    const after = await endpointOf(h, endpoint.id)
    expect(after.consecutiveFailures).toBe(0)
    expect(after.lastDeliveryAt).toEqual(expect.any(String))
  })

  it('a delivery that fails all eight attempts is failed; 20 failures in a row disable the endpoint, queued deliveries then fail as they come due, and later events are not queued', async () => {
    const h = await emulator()
    const rx = await receiver()
    const endpoint = await h.register(rx.url)
    rx.use(answer(500, 'x'.repeat(800)))
    for (const id of [1, 2, 3]) await emit(h, id)
    await h.advance(WHOLE_SCHEDULE_MS)
    const log = await readLog(h)
    expect(log).toHaveLength(20)
    expect(log.every((e) => !e.ok)).toBe(true)
    const state = await endpointOf(h, endpoint.id)
    expect(state).toMatchObject({ status: 'disabled', consecutiveFailures: 20 })
    expect(state.disabledAt).toEqual(expect.any(String))
    const list = await deliveries(h, endpoint.id)
    expect(list.map((d: { status: string }) => d.status)).toEqual(['failed', 'failed', 'failed'])
    expect(list[0].responseBody).toHaveLength(500)
    expect(list.map((d: { attempts: number }) => d.attempts).sort()).toEqual([6, 7, 7])

    const whileDisabled = await emit(h, 4)
    expect(whileDisabled.body.data.event.type).toBe('conversion.created')
    expect(whileDisabled.body.data.deliveries).toEqual([])

    // PATCH status active: the streak is reset and new events are queued again.
    rx.use(affiliateWebhook({ secret: endpoint.secret, store: memoryStore(), onConversion() {} }))
    expect(await h.patch(endpoint.id, { status: 'active' })).toMatchObject({
      status: 'active',
      consecutiveFailures: 0,
      disabledAt: null,
    })
    expect((await emit(h, 5)).body.data.deliveries).toHaveLength(1)
    await h.advance(0)
    expect((await readLog(h)).at(-1)).toMatchObject({ ok: true, attempt: 1 })
  })

  it('the eighth failed attempt ends a delivery as failed, after about 45 hours', async () => {
    const h = await emulator()
    const rx = await receiver()
    const endpoint = await h.register(rx.url)
    rx.use(answer(503))
    await emit(h, 1)
    await h.advance(WHOLE_SCHEDULE_MS)
    const log = await readLog(h)
    expect(log.map((e) => e.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
    const span = Date.parse((log.at(-1) as LogEntry).at) - Date.parse((log[0] as LogEntry).at)
    const total = RETRY_SCHEDULE_MS.reduce((a, b) => a + b, 0)
    expect(span).toBeGreaterThanOrEqual(total)
    expect(span).toBeLessThan(total + 10_000)
    const [delivery] = await deliveries(h, endpoint.id)
    expect(delivery).toMatchObject({ status: 'failed', attempts: 8, responseStatus: 503 })
    expect((await endpointOf(h, endpoint.id)).status).toBe('active')
  })

  it('replay resends the same event id with a fresh set of attempts; the receiver skips it as a duplicate', async () => {
    const h = await emulator()
    const rx = await receiver()
    const endpoint = await h.register(rx.url)
    const handled: string[] = []
    const duplicates: string[] = []
    rx.use(
      affiliateWebhook({
        secret: endpoint.secret,
        store: memoryStore(),
        onConversion: (_c, event) => {
          handled.push(event.id)
        },
        onDuplicate: (event) => {
          duplicates.push(event.id)
        },
      }),
    )
    const { event } = (await emit(h, 1)).body.data
    await h.advance(0)
    const [delivery] = await deliveries(h, endpoint.id)
    expect(delivery.status).toBe('succeeded')
    const replay = await h.call(
      'POST',
      `/v1/webhooks/${endpoint.id}/deliveries/${delivery.id}/replay`,
    )
    expect(replay.status).toBe(202)
    await h.advance(0)
    expect(handled).toEqual([event.id])
    expect(duplicates).toEqual([event.id])
    const log = await readLog(h)
    expect(log.map((e) => [e.deliveryId, e.eventId, e.attempt, e.ok])).toEqual([
      [delivery.id, event.id, 1, true],
      [delivery.id, event.id, 1, true],
    ])
    const [after] = await deliveries(h, endpoint.id)
    expect(after).toMatchObject({ status: 'succeeded', attempts: 1, attemptsTotal: 2, replays: 1 })
  })

  it('replay of a failed delivery starts eight new attempts', async () => {
    const h = await emulator()
    const rx = await receiver()
    const endpoint = await h.register(rx.url)
    rx.use(answer(500))
    await emit(h, 1)
    await h.advance(WHOLE_SCHEDULE_MS)
    const [failed] = await deliveries(h, endpoint.id)
    expect(failed.status).toBe('failed')
    expect(
      (await h.call('POST', `/v1/webhooks/${endpoint.id}/deliveries/${failed.id}/replay`)).status,
    ).toBe(202)
    await h.advance(WHOLE_SCHEDULE_MS)
    const log = await readLog(h)
    expect(log.map((e) => e.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8])
  })

  it('rotation mid-retry: the next attempt is signed with the new secret only', async () => {
    const h = await emulator()
    const rx = await receiver()
    const endpoint = await h.register(rx.url)
    const oldSecret = endpoint.secret as string
    rx.use(answer(500))
    await emit(h, 1)
    await h.advance(0)
    expect((await readLog(h)).map((e) => e.ok)).toEqual([false])
    const newSecret = (await h.call('POST', `/v1/webhooks/${endpoint.id}/rotate-secret`)).body.data
      .secret
    const signatures: string[] = []
    const receive = affiliateWebhook({ secret: newSecret, store: memoryStore(), onConversion() {} })
    rx.use((req, res) => {
      signatures.push(String(req.headers['service-signature']))
      receive(req, res)
    })
    await h.advance(60_000)
    const log = await readLog(h)
    expect(log.map((e) => [e.attempt, e.ok, e.responseStatus])).toEqual([
      [1, false, 500],
      [2, true, 200],
    ])
    // The old secret would not have verified it.
    const old = affiliateWebhook({ secret: oldSecret, store: memoryStore(), onConversion() {} })
    const [delivery] = await deliveries(h, endpoint.id)
    rx.use(old)
    expect(
      (await h.call('POST', `/v1/webhooks/${endpoint.id}/deliveries/${delivery.id}/replay`)).status,
    ).toBe(202)
    await h.advance(0)
    expect((await readLog(h)).at(-1)).toMatchObject({ ok: false, responseStatus: 401 })
    expect(signatures).toHaveLength(1)
  })

  it('sends the spec headers, signed t=,v1= over t.body with the whole whsec_ secret', async () => {
    const h = await emulator()
    const rx = await receiver()
    const endpoint = await h.register(rx.url)
    const seen: { headers: IncomingMessage['headers']; body: string }[] = []
    rx.use((req, res) => {
      let body = ''
      req.setEncoding('utf8')
      req.on('data', (chunk: string) => {
        body += chunk
      })
      req.on('end', () => {
        seen.push({ headers: req.headers, body })
        res.writeHead(204)
        res.end()
      })
    })
    const { event } = (await emit(h, 77, 'approved')).body.data
    await h.advance(0)
    const [{ headers, body }] = seen as [(typeof seen)[number]]
    expect(headers['content-type']).toBe('application/json')
    expect(headers['service-event-id']).toBe(event.id)
    expect(headers['service-delivery-attempt']).toBe('1')
    const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(headers['service-signature']))
    expect(match).not.toBeNull()
    const [, t, v1] = match as RegExpExecArray
    const expected = createHmac('sha256', endpoint.secret).update(`${t}.${body}`).digest()
    expect(timingSafeEqual(expected, Buffer.from(v1 as string, 'hex'))).toBe(true)
    // Signed at attempt time on the real clock, so a receiver's tolerance accepts it.
    expect(Math.abs(Number(t) - Date.now() / 1000)).toBeLessThan(60)
    const parsed = JSON.parse(body) as AnyWebhookEvent & {
      data: { conversion: { id: number; status: string } }
    }
    expect(parsed).toMatchObject({
      id: event.id,
      type: 'conversion.created',
      data: { conversion: { id: 77, status: 'approved' } },
    })
    expect(Number.isNaN(Date.parse(parsed.createdAt))).toBe(false)
  })

  it('webhook.test goes to the endpoint whatever it subscribes to', async () => {
    const h = await emulator()
    const rx = await receiver()
    const endpoint = await h.register(rx.url, ['conversion.updated'])
    const tests: string[] = []
    rx.use(
      affiliateWebhook({
        secret: endpoint.secret,
        store: memoryStore(),
        on: {
          'webhook.test': (event) => {
            tests.push(event.id)
          },
        },
      }),
    )
    const queued = (await h.call('POST', `/v1/webhooks/${endpoint.id}/test`)).body.data
    await h.advance(0)
    expect(tests).toEqual([queued.eventId])
    expect((await deliveries(h, endpoint.id))[0]).toMatchObject({
      eventType: 'webhook.test',
      status: 'succeeded',
    })
  })

  it('a redirect is a failure and is not followed; a refused connection is a failure with an errorMessage', async () => {
    const h = await emulator()
    const target = await receiver()
    let followed = 0
    target.use((req, res) => {
      followed++
      req.resume()
      res.end()
    })
    const redirecting = await receiver()
    redirecting.use((req, res) => {
      req.resume()
      res.writeHead(302, { location: target.url })
      res.end()
    })
    const gone = await startReceiver()
    const goneUrl = gone.url
    await gone.close()
    const a = await h.register(redirecting.url)
    const b = await h.register(goneUrl)
    await emit(h, 1)
    await h.advance(0)
    expect(followed).toBe(0)
    expect((await deliveries(h, a.id))[0]).toMatchObject({
      status: 'retrying',
      responseStatus: 302,
    })
    const refused = (await deliveries(h, b.id))[0]
    expect(refused).toMatchObject({ status: 'retrying', responseStatus: null })
    expect(refused.errorMessage).toMatch(/ECONNREFUSED/)
    expect((await readLog(h)).find((e) => e.webhookId === b.id)?.result).toBe('connection_error')
  })

  it('a handler slower than the time limit is a timeout (limit injected: 300 ms)', async () => {
    const h = await emulator({ attemptTimeoutMs: 300 })
    const rx = await receiver()
    const endpoint = await h.register(rx.url)
    const late = affiliateWebhook({
      secret: endpoint.secret,
      store: memoryStore(),
      onConversion: () => new Promise((resolve) => setTimeout(resolve, 1_000)),
    })
    rx.use(late)
    await emit(h, 1)
    await h.advance(0)
    const [entry] = await readLog(h)
    expect(entry).toMatchObject({ ok: false, result: 'timeout', responseStatus: null })
    expect(entry?.durationMs).toBeGreaterThanOrEqual(300)
    expect((await deliveries(h, endpoint.id))[0]).toMatchObject({
      status: 'retrying',
      errorMessage: expect.stringMatching(/300 ms/),
    })
  })

  it('the real limit: a handler that takes longer than 10 s is a timeout', async () => {
    const h = await emulator()
    const rx = await receiver()
    const endpoint = await h.register(rx.url)
    rx.use(
      affiliateWebhook({
        secret: endpoint.secret,
        store: memoryStore(),
        onConversion: () => new Promise((resolve) => setTimeout(resolve, 11_000)),
      }),
    )
    await emit(h, 1)
    await h.advance(0)
    const [entry] = await readLog(h)
    expect(entry).toMatchObject({ ok: false, result: 'timeout', responseStatus: null })
    expect(entry?.durationMs).toBeGreaterThanOrEqual(10_000)
    expect(entry?.durationMs).toBeLessThan(11_000)
  }, 20_000)

  it('with --time-scale the schedule runs on its own: attempt 2 comes 1 minute / scale later', async () => {
    const h = await emulator({ timeScale: 600 })
    const rx = await receiver()
    const endpoint = await h.register(rx.url)
    let calls = 0
    const done = new Promise<void>((resolve) => {
      rx.use(
        affiliateWebhook({
          secret: endpoint.secret,
          store: memoryStore(),
          onConversion() {
            calls++
            if (calls === 1) throw new Error('first fails')
            resolve()
          },
        }),
      )
    })
    await emit(h, 1)
    await done
    // Waits for the attempt in flight to be recorded.
    await h.advance(0)
    const log = await readLog(h)
    expect(log.map((e) => e.attempt)).toEqual([1, 2])
    expect(
      Date.parse((log[1] as LogEntry).at) - Date.parse((log[0] as LogEntry).at),
    ).toBeGreaterThanOrEqual(60_000)
  })
})

import { once } from 'node:events'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { verifyEvent } from '@affiliate-webhooks/core'
import { buildConversionEvent, buildTestEvent } from '@affiliate-webhooks/core/testing'
import {
  BATCH_INTERVAL_MS,
  DISABLE_AFTER_FAILURES,
  isSimulatorError,
  MAX_ATTEMPTS,
  RESPONSE_BODY_CHARS,
  RETRY_SCHEDULE_MS,
} from '@affiliate-webhooks/emulator'
import { afterEach, describe, expect, it } from 'vitest'
import { createDeliverySimulator, type DeliverySimulator } from './simulator.js'

const SECRET = 'whsec_simulator_test'
const MINUTE = 60_000
const HOUR = 60 * MINUTE

interface Received {
  headers: IncomingMessage['headers']
  body: string
}

type Answer = (received: Received, res: ServerResponse, count: number) => void

/** A receiver on port 0 that records every request and answers with `answer`. */
async function receiver(answer: Answer) {
  const received: Received[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const entry = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8') }
      received.push(entry)
      answer(entry, res, received.length)
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`
  cleanups.push(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })
  return { url, received }
}

const status =
  (code: number, body = '{}'): Answer =>
  (_received, res) =>
    res.writeHead(code, { 'content-type': 'application/json' }).end(body)

const cleanups: (() => Promise<void>)[] = []
const track = (simulator: DeliverySimulator) => {
  cleanups.push(() => simulator.close())
  return simulator
}
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

describe('delivery rules', () => {
  it("are the spec's: 8 attempts at +1 min, +5 min, +30 min, +2 h, +6 h, +12 h, +24 h; 20 failures disable; 500 characters kept", () => {
    expect(RETRY_SCHEDULE_MS).toEqual([
      MINUTE,
      5 * MINUTE,
      30 * MINUTE,
      2 * HOUR,
      6 * HOUR,
      12 * HOUR,
      24 * HOUR,
    ])
    expect(MAX_ATTEMPTS).toBe(8)
    expect(DISABLE_AFTER_FAILURES).toBe(20)
    expect(RESPONSE_BODY_CHARS).toBe(500)
    expect(BATCH_INTERVAL_MS).toBe(MINUTE)
  })
})

describe('createDeliverySimulator', () => {
  it("sends signed requests with the spec's headers, which the core verifies", async () => {
    const { url, received } = await receiver(status(200))
    const simulator = track(createDeliverySimulator({ url, secret: SECRET, timeScale: HOUR }))
    const event = buildConversionEvent({ conversion: { id: 7, status: 'pending' } })
    const delivery = simulator.enqueue(event)
    await simulator.idle()
    expect(delivery?.status).toBe('succeeded')
    expect(received).toHaveLength(1)
    const [{ headers, body }] = received as [Received]
    expect(headers['content-type']).toBe('application/json')
    expect(headers['service-event-id']).toBe(event.id)
    expect(headers['service-delivery-attempt']).toBe('1')
    expect(body).toBe(JSON.stringify(event))
    const verified = await verifyEvent({
      headers: headers as Record<string, string>,
      rawBody: new TextEncoder().encode(body),
      secret: SECRET,
    })
    expect(verified.id).toBe(event.id)
    // Signed when sent: t is this machine's clock, within a second or two.
    const t = Number(/t=(\d+)/.exec(headers['service-signature'] as string)?.[1])
    expect(Math.abs(t - Date.now() / 1000)).toBeLessThan(5)
  })

  it('retries every failure on the schedule, re-signing each attempt, until the 8th fails', async () => {
    const { url, received } = await receiver(status(500, '{"error":{"code":"handler_failed"}}'))
    // An hour of service time per real ms: the 45 h schedule takes a few dozen ms.
    const simulator = track(createDeliverySimulator({ url, secret: SECRET, timeScale: HOUR }))
    const delivery = simulator.enqueue(buildTestEvent())
    await simulator.idle()
    expect(delivery?.status).toBe('failed')
    expect(delivery?.failedBecause).toBe('attempts_exhausted')
    expect(received.map((r) => r.headers['service-delivery-attempt'])).toEqual([
      '1',
      '2',
      '3',
      '4',
      '5',
      '6',
      '7',
      '8',
    ])
    for (const r of received) {
      await expect(
        verifyEvent({
          headers: r.headers as Record<string, string>,
          rawBody: new TextEncoder().encode(r.body),
          secret: SECRET,
          tolerance: 3600,
        }),
      ).resolves.toBeDefined()
    }
    const attempts = delivery?.attempts ?? []
    for (let n = 1; n < attempts.length; n++) {
      const previous = attempts[n - 1]
      const attempt = attempts[n]
      // Due exactly at the offset after the previous attempt, and never sent before it.
      expect(attempt?.dueAt).toBe((previous?.at ?? 0) + (RETRY_SCHEDULE_MS[n - 1] ?? 0))
      expect(attempt?.at).toBeGreaterThanOrEqual(attempt?.dueAt ?? 0)
      expect(attempt?.batchAt).toBeGreaterThanOrEqual(attempt?.dueAt ?? 0)
    }
    expect(attempts.map((a) => a.responseStatus)).toEqual(Array(8).fill(500))
    expect(attempts[0]?.responseBody).toBe('{"error":{"code":"handler_failed"}}')
  })

  it('sends deliveries in batches a minute apart', async () => {
    const { url } = await receiver(status(200))
    // A minute of service time per 50 real ms.
    const start = Date.UTC(2026, 10, 21, 12)
    const simulator = track(
      createDeliverySimulator({ url, secret: SECRET, timeScale: MINUTE / 50, startAt: start }),
    )
    const events = [5, 20, 41].map((seconds) => ({
      event: buildTestEvent(),
      at: start + seconds * 1000,
    }))
    for (const { event, at } of events) simulator.emit(event, { at })
    await simulator.idle()
    const batches = simulator.deliveries().map((d) => d.attempts[0]?.batchAt)
    // Events that occur within one minute all go out with the batch at its end.
    expect(new Set(batches).size).toBe(1)
    expect(((batches[0] ?? 0) - start) % MINUTE).toBe(0)
    for (const delivery of simulator.deliveries()) {
      expect(delivery.attempts[0]?.at).toBeGreaterThanOrEqual(delivery.attempts[0]?.batchAt ?? 0)
    }
  })

  it('counts a redirect as a failure and does not follow it', async () => {
    const { url, received } = await receiver((_r, res) =>
      res.writeHead(302, { location: '/elsewhere' }).end(),
    )
    const simulator = track(
      createDeliverySimulator({
        url,
        secret: SECRET,
        timeScale: HOUR,
        retryScheduleMs: [],
      }),
    )
    const delivery = simulator.enqueue(buildTestEvent())
    await simulator.idle()
    expect(received).toHaveLength(1)
    expect(delivery?.status).toBe('failed')
    expect(delivery?.attempts[0]).toMatchObject({ ok: false, responseStatus: 302 })
  })

  it('counts an answer slower than the time limit as a failure (timeout)', async () => {
    const { url } = await receiver((_r, res, count) => {
      // The first attempt answers too late; the retry at once.
      if (count === 1) setTimeout(() => res.writeHead(200).end(), 400).unref()
      else res.writeHead(200).end()
    })
    const simulator = track(
      createDeliverySimulator({ url, secret: SECRET, timeScale: HOUR, timeoutMs: 100 }),
    )
    const delivery = simulator.enqueue(buildTestEvent())
    await simulator.idle()
    const [first, second] = delivery?.attempts ?? []
    expect(first).toMatchObject({ ok: false, errorKind: 'timeout' })
    expect(first?.responseStatus).toBeUndefined()
    expect(first?.durationMs).toBeGreaterThanOrEqual(99)
    expect(second).toMatchObject({ ok: true, responseStatus: 200, attempt: 2 })
    expect(delivery?.status).toBe('succeeded')
  })

  it('records a refused connection with an error message and no status', async () => {
    const { url } = await receiver(status(200))
    await cleanups.pop()?.()
    const simulator = track(
      createDeliverySimulator({ url, secret: SECRET, timeScale: HOUR, retryScheduleMs: [] }),
    )
    const delivery = simulator.enqueue(buildTestEvent())
    await simulator.idle()
    expect(delivery?.attempts[0]).toMatchObject({ ok: false, errorKind: 'connection_error' })
    expect(delivery?.attempts[0]?.errorMessage).toMatch(/ECONNREFUSED/)
  })

  it('keeps the first 500 characters of an answer', async () => {
    const { url } = await receiver(status(200, `${'é'.repeat(499)}✓✓✓${'x'.repeat(3000)}`))
    const simulator = track(createDeliverySimulator({ url, secret: SECRET, timeScale: HOUR }))
    const delivery = simulator.enqueue(buildTestEvent())
    await simulator.idle()
    const body = delivery?.attempts[0]?.responseBody ?? ''
    expect(Array.from(body)).toHaveLength(500)
    expect(body).toBe(`${'é'.repeat(499)}✓`)
  })

  it('disables the endpoint after 20 failed attempts in a row, fails what comes due, queues nothing new', async () => {
    const { url, received } = await receiver(status(503))
    const changes: string[] = []
    const simulator = track(
      createDeliverySimulator({
        url,
        secret: SECRET,
        timeScale: HOUR,
        // One at a time, so exactly 20 attempts are made before the endpoint is disabled.
        concurrency: 1,
        onEndpointChange: (endpoint) => changes.push(endpoint.status),
      }),
    )
    for (let n = 0; n < 25; n++) simulator.enqueue(buildTestEvent())
    await simulator.idle()
    expect(received).toHaveLength(DISABLE_AFTER_FAILURES)
    expect(simulator.endpoint.status).toBe('disabled')
    expect(simulator.endpoint.consecutiveFailures).toBe(20)
    expect(changes).toEqual(['disabled'])
    const deliveries = simulator.deliveries()
    expect(deliveries.every((d) => d.status === 'failed')).toBe(true)
    // Those never tried, or waiting to retry, were failed as they came due.
    expect(deliveries.filter((d) => d.failedBecause === 'endpoint_disabled')).toHaveLength(25)

    expect(simulator.enqueue(buildTestEvent())).toBeUndefined()
    expect(simulator.stats().notQueued).toBe(1)

    simulator.enable()
    expect(simulator.endpoint).toMatchObject({ status: 'active', consecutiveFailures: 0 })
  })

  it('resets the failure streak on a success', async () => {
    const { url } = await receiver((_r, res, count) =>
      res.writeHead(count === 20 ? 200 : 500).end(),
    )
    const simulator = track(
      createDeliverySimulator({
        url,
        secret: SECRET,
        timeScale: HOUR,
        concurrency: 1,
        retryScheduleMs: [],
      }),
    )
    // 19 failures, a success, 19 failures: 38 failed attempts, never 20 in a row.
    for (let n = 0; n < 39; n++) simulator.enqueue(buildTestEvent())
    await simulator.idle()
    expect(simulator.stats().attempts).toEqual({ total: 39, succeeded: 1, failed: 38 })
    expect(simulator.endpoint).toMatchObject({ status: 'active', consecutiveFailures: 19 })
    // One more makes 20 in a row.
    simulator.enqueue(buildTestEvent())
    await simulator.idle()
    expect(simulator.endpoint).toMatchObject({ status: 'disabled', consecutiveFailures: 20 })
  })

  it('replays a succeeded or failed delivery with the same event id and a fresh set of attempts', async () => {
    let failing = true
    const { url, received } = await receiver((_r, res) => res.writeHead(failing ? 500 : 204).end())
    const simulator = track(createDeliverySimulator({ url, secret: SECRET, timeScale: HOUR }))
    const event = buildTestEvent()
    const delivery = simulator.enqueue(event)
    await simulator.idle()
    expect(delivery?.status).toBe('failed')

    failing = false
    const replayed = simulator.replay(delivery?.id as string)
    expect(replayed).toBe(delivery)
    expect(replayed.status).toBe('pending')
    await simulator.idle()
    expect(replayed.status).toBe('succeeded')
    expect(replayed.replays).toBe(1)
    const last = received.at(-1)
    expect(last?.headers['service-event-id']).toBe(event.id)
    expect(last?.headers['service-delivery-attempt']).toBe('1')
    expect(replayed.attempts.map((a) => `${a.round}:${a.attempt}`)).toEqual([
      '0:1',
      '0:2',
      '0:3',
      '0:4',
      '0:5',
      '0:6',
      '0:7',
      '0:8',
      '1:1',
    ])

    // Succeeded can be replayed too: the receiver sees the same event again.
    simulator.replay(replayed.id)
    await simulator.idle()
    expect(received.filter((r) => r.headers['service-event-id'] === event.id)).toHaveLength(10)
  })

  it('refuses to replay a pending or retrying delivery (409) or an unknown one (404)', async () => {
    const { url } = await receiver(status(500))
    const simulator = track(createDeliverySimulator({ url, secret: SECRET }))
    const delivery = simulator.enqueue(buildTestEvent()) as NonNullable<
      ReturnType<DeliverySimulator['enqueue']>
    >
    expect(delivery.status).toBe('pending')
    const refused: unknown = (() => {
      try {
        simulator.replay(delivery.id)
        return undefined
      } catch (error) {
        return error
      }
    })()
    expect(isSimulatorError(refused)).toBe(true)
    expect(refused).toMatchObject({ code: 'delivery_not_replayable', status: 409 })
    expect(() => simulator.replay('dlv_nope')).toThrow(
      expect.objectContaining({ code: 'delivery_not_found', status: 404 }),
    )
  })

  it('holds an event back until `notBefore`, so a newer one arrives first', async () => {
    const { url, received } = await receiver(status(200))
    const simulator = track(
      createDeliverySimulator({ url, secret: SECRET, timeScale: MINUTE / 20 }),
    )
    const older = buildConversionEvent({
      createdAt: 1000,
      conversion: { id: 1, status: 'pending' },
    })
    const newer = buildConversionEvent({
      type: 'conversion.updated',
      createdAt: 2000,
      conversion: { id: 1, status: 'approved' },
    })
    simulator.enqueue(older, { notBefore: simulator.now() + 2 * MINUTE })
    simulator.enqueue(newer)
    await simulator.idle()
    expect(received.map((r) => r.headers['service-event-id'])).toEqual([newer.id, older.id])
  })

  it('keeps at most `concurrency` attempts in flight', async () => {
    let open = 0
    let most = 0
    const { url } = await receiver((_r, res) => {
      open++
      most = Math.max(most, open)
      setTimeout(() => {
        open--
        res.writeHead(200).end()
      }, 5)
    })
    const simulator = track(
      createDeliverySimulator({ url, secret: SECRET, timeScale: HOUR, concurrency: 3 }),
    )
    for (let n = 0; n < 12; n++) simulator.enqueue(buildTestEvent())
    await simulator.idle()
    expect(most).toBe(3)
    expect(simulator.stats().deliveries.succeeded).toBe(12)
  })
})

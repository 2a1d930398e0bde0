import { once } from 'node:events'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createClient } from '../client.js'
import { isServiceError } from '../http/errors.js'
import { followLive } from './follow-live.js'

const KEY = `la_${'l'.repeat(32)}`
const closers: (() => Promise<void>)[] = []
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()))
})

/** A server on loopback; each request to it is handed to `answer` with its number (0, 1, ...). */
async function serve(answer: (req: IncomingMessage, res: ServerResponse, n: number) => void) {
  const seen: IncomingMessage[] = []
  const server = createServer((req, res) => {
    seen.push(req)
    answer(req, res, seen.length - 1)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  closers.push(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })
  const { port } = server.address() as AddressInfo
  return { api: createClient({ apiKey: KEY, baseUrl: `http://127.0.0.1:${port}` }), seen }
}

const sse = (res: ServerResponse, text: string) =>
  res.writeHead(200, { 'content-type': 'text/event-stream' }).write(text)

const delivery = {
  id: 'del_1',
  webhookId: 'wh_1',
  eventId: 'evt_1',
  eventType: 'conversion.created',
  status: 'retrying',
  attempts: 1,
  responseStatus: 500,
  responseBody: '{"error":{"code":"crm_down"}}',
  durationMs: 12,
  errorMessage: null,
  nextAttemptAt: '2026-01-01T00:01:00.000Z',
}

describe('followLive', () => {
  it('turns the stream into attempts and changes, and reconnects with Last-Event-ID', async () => {
    const { api, seen } = await serve((_req, res, n) => {
      if (n === 0) {
        // Ready, one attempt, then the stream ends (the emulator restarted, say).
        sse(res, 'id: 2\nevent: ready\ndata: {"status":"active"}\n\n')
        res.end(`id: 3\nevent: attempt\ndata: ${JSON.stringify(delivery)}\n\n`)
      } else {
        // Disabled while the stream was down: the next ready says so.
        sse(res, 'id: 3\nevent: ready\ndata: {"status":"disabled"}\n\n')
      }
    })
    const controller = new AbortController()
    const events: { type: string }[] = []
    await expect(
      (async () => {
        for await (const event of followLive(api, 'wh_1', { signal: controller.signal })) {
          events.push(event)
          if (event.type === 'endpoint') controller.abort(new Error('done'))
        }
      })(),
    ).rejects.toThrow('done')
    expect(events.map((e) => e.type)).toEqual(['live', 'attempt', 'reconnect', 'endpoint'])
    expect(events[1]).toMatchObject({
      endpointId: 'wh_1',
      eventId: 'evt_1',
      attempt: 1,
      status: 'retrying',
      responseStatus: 500,
      errorCode: 'crm_down',
    })
    expect(events[2]).toMatchObject({ delayMs: 1_000, reason: 'the stream ended' })
    expect(events[3]).toMatchObject({ endpointId: 'wh_1', status: 'disabled' })
    expect(seen.map((req) => req.url)).toEqual([
      '/emulator/webhooks/wh_1/events',
      '/emulator/webhooks/wh_1/events',
    ])
    expect(seen[0]?.headers['last-event-id']).toBeUndefined()
    expect(seen[1]?.headers['last-event-id']).toBe('3')
    expect(seen[0]?.headers.authorization).toBe(`Bearer ${KEY}`)
  })

  it('opens a stream again that went silent (no keepalive) for idleMs, though it never closed', async () => {
    const { api, seen } = await serve((_req, res, n) => {
      // The first connection says ready, then nothing, and stays open.
      if (n === 0) sse(res, 'id: 1\nevent: ready\ndata: {"status":"active"}\n\n')
      else sse(res, 'id: 1\nevent: ready\ndata: {"status":"disabled"}\n\n')
    })
    const controller = new AbortController()
    const events: { type: string; reason?: string }[] = []
    const started = performance.now()
    await expect(
      (async () => {
        for await (const event of followLive(api, 'wh_1', {
          signal: controller.signal,
          idleMs: 300,
        })) {
          events.push(event as { type: string; reason?: string })
          if (event.type === 'endpoint') controller.abort(new Error('done'))
        }
      })(),
    ).rejects.toThrow('done')
    expect(events.map((e) => e.type)).toEqual(['live', 'reconnect', 'endpoint'])
    expect(events[1]?.reason).toMatch(/no bytes for 300 ms/)
    expect(seen).toHaveLength(2)
    // Not before the silence ran out (plus the 1 s wait before opening it again).
    expect(performance.now() - started).toBeGreaterThanOrEqual(1_300)
  })

  it('a refusal is thrown at once, not retried', async () => {
    const { api, seen } = await serve((_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          success: false,
          message: 'No webhook wh_9.',
          error: { code: 'webhook_not_found' },
        }),
      )
    })
    const error = await (async () => {
      for await (const _ of followLive(api, 'wh_9')) {
      }
    })().catch((caught: unknown) => caught)
    expect(isServiceError(error) && error.code).toBe('webhook_not_found')
    expect(seen).toHaveLength(1)
  })

  it('an answer that is no event stream is an invalid_response, not a loop', async () => {
    const { api } = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>')
    })
    const error = await (async () => {
      for await (const _ of followLive(api, 'wh_1')) {
      }
    })().catch((caught: unknown) => caught)
    expect(isServiceError(error) && error.code).toBe('invalid_response')
  })
})

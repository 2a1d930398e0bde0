/**
 * An emulator started in-process on port 0, a client for its API, and receivers
 * on real sockets, for the emulator tests.
 */
import { once } from 'node:events'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { buildConversionEvent } from '@affiliate-webhooks/core/testing'
import { createEmulator, type Emulator, type EmulatorOptions } from '@affiliate-webhooks/emulator'

export interface Reply {
  status: number
  headers: Headers
  // biome-ignore lint/suspicious/noExplicitAny: the envelope as JSON, read by the assertions
  body: any
}

export interface Harness {
  emulator: Emulator
  base: string
  key: string
  /** One request; `key: null` sends none, `raw` sends the text as is. */
  call(
    method: string,
    path: string,
    options?: { body?: unknown; raw?: string | Uint8Array; key?: string | null },
  ): Promise<Reply>
  /** PATCH /v1/webhooks/{id}; resolves to the endpoint. */
  // biome-ignore lint/suspicious/noExplicitAny: endpoint JSON
  patch(id: string, body: object): Promise<any>
  /** POST /emulator/clock. */
  advance(ms: number): Promise<Reply>
  /** POST /v1/webhooks with these fields; resolves to the endpoint (secret included). */
  register(
    url: string,
    events?: string[],
    // biome-ignore lint/suspicious/noExplicitAny: endpoint JSON
  ): Promise<any>
  close(): Promise<void>
}

export const HOUR = 3_600_000
/** Longer than the whole schedule (1m + 5m + 30m + 2h + 6h + 12h + 24h). */
export const WHOLE_SCHEDULE_MS = 50 * HOUR

/**
 * An emulator on port 0. These tests step the clock by hand (`advance(0)` sends
 * what is due now), so the minute batches are off unless asked for; the batches
 * themselves are tested in delivery-rules.test.ts against both drivers.
 */
export async function startEmulator(options: EmulatorOptions = {}): Promise<Harness> {
  const emulator = createEmulator({ batchIntervalMs: 0, ...options })
  const base = await emulator.listen(0, '127.0.0.1')
  const key = emulator.apiKeys[0]?.key as string
  const call: Harness['call'] = async (method, path, callOptions = {}) => {
    const headers: Record<string, string> = {}
    const usedKey = callOptions.key === undefined ? key : callOptions.key
    if (usedKey !== null) headers.authorization = `Bearer ${usedKey}`
    let body: string | Uint8Array | undefined = callOptions.raw
    if (callOptions.body !== undefined) body = JSON.stringify(callOptions.body)
    if (body !== undefined) headers['content-type'] = 'application/json'
    const response = await fetch(base + path, {
      method,
      headers,
      ...(body ? { body: body as BodyInit } : {}),
    })
    const text = await response.text()
    return { status: response.status, headers: response.headers, body: JSON.parse(text) }
  }
  const harness: Harness = {
    emulator,
    base,
    key,
    call,
    advance: (ms) => call('POST', '/emulator/clock', { body: { advanceMs: ms } }),
    async patch(id, body) {
      const reply = await call('PATCH', `/v1/webhooks/${id}`, { body })
      if (reply.status !== 200) throw new Error(`patch: ${JSON.stringify(reply.body)}`)
      return reply.body.data
    },
    async register(url, events = ['conversion.created', 'conversion.updated']) {
      const reply = await call('POST', '/v1/webhooks', { body: { url, events } })
      if (reply.status !== 201) throw new Error(`register: ${JSON.stringify(reply.body)}`)
      return reply.body.data
    },
    close: () => emulator.close(),
  }
  return harness
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void

export interface Receiver {
  url: string
  /** Swaps the handler (e.g. once the endpoint's secret is known). */
  use(handler: Handler): void
  close(): Promise<void>
}

/** A node:http server on port 0 whose handler can be swapped. */
export async function startReceiver(
  handler: Handler = (_req, res) => res.end(),
  path = '/hooks',
): Promise<Receiver> {
  let current = handler
  const server = createServer((req, res) => current(req, res))
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
    use(next) {
      current = next
    },
    async close() {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

/**
 * A publisher's receiver (the node adapter, a memory store) on a real socket:
 * it records each conversion it handled (and the event's id), and its handler
 * throws while `state.broken`. `useSecret` arms it once the endpoint exists.
 */
export async function startPublisher(receivers: Receiver[]) {
  const handled: string[] = []
  const conversions: Record<string, unknown>[] = []
  const state = { broken: false }
  const receiver = await startReceiver()
  receivers.push(receiver)
  const [{ affiliateWebhook }, { memoryStore }] = await Promise.all([
    import('@affiliate-webhooks/node'),
    import('@affiliate-webhooks/core'),
  ])
  return {
    url: receiver.url,
    handled,
    conversions,
    state,
    useSecret(secret: string) {
      receiver.use(
        affiliateWebhook({
          secret,
          store: memoryStore(),
          logger: false,
          onConversion(conversion, event) {
            if (state.broken) throw new Error('CRM down')
            handled.push(event.id)
            conversions.push({ ...conversion })
          },
          on: { 'webhook.test': () => {} },
        }) as Handler,
      )
    },
  }
}

/** A conversion body for POST /emulator/conversions: the testing helper's conversion. */
export const conversion = (id: number, status = 'pending') =>
  buildConversionEvent({ conversion: { id, status } }).data.conversion

/** A receiver handler that reads the body and answers `status` with `body`. */
export const answer =
  (status: number, body = ''): Handler =>
  (req, res) => {
    req.resume()
    res.writeHead(status, { 'content-type': 'text/plain' })
    res.end(body)
  }

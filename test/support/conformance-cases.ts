/**
 * One list of cases every adapter must pass over real HTTP. `forEachAdapter`
 * runs the whole list once per adapter; a case talks only to the URL it is given,
 * so the same expectations hold for node:http, Express, Fastify and Next.
 */
import { request } from 'node:http'
import type { Conversion, ConversionEvent, ReceiverOptions } from '@affiliate-webhooks/core'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import { afterEach, describe, expect, it } from 'vitest'
import type { Adapter, Running } from './conformance-adapters.js'

export const SECRET = 'whsec_conformance_suite'
const utf8 = new TextEncoder()

export interface Answer {
  status: number
  headers: Headers
  json: { received?: boolean; outcome?: string; error?: { code: string; message: string } }
}

export interface SendOptions {
  timestamp?: number
  attempt?: number
  /** Changes the body after signing, as a proxy or an attacker would. */
  tamper?: (body: string) => string
  /** Replaces the signed headers (a header set to undefined is left out). */
  headers?: Record<string, string | undefined>
  method?: string
  /** Keeps a body that is not JSON (a framework's own answer) as `text` instead of failing. */
  raw?: boolean
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return { text }
  }
}

/** Sends one signed delivery, as the service would, and reads the answer. */
export async function send(url: string, event: object, options: SendOptions = {}) {
  const delivery = await signedDelivery({
    secret: SECRET,
    event,
    ...(options.timestamp === undefined ? {} : { timestamp: options.timestamp }),
    attempt: options.attempt ?? 1,
  })
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries({ ...delivery.headers, ...options.headers })) {
    if (value !== undefined) headers[name] = value
  }
  const response = await fetch(url, {
    method: options.method ?? 'POST',
    headers,
    // Bytes, so fetch adds no Content-Type of its own (the no-Content-Type case needs that).
    body:
      options.method === 'GET'
        ? null
        : utf8.encode(options.tamper?.(delivery.body) ?? delivery.body),
    // A case that hangs fails here rather than at the test timeout.
    signal: AbortSignal.timeout(10_000),
  })
  const text = await response.text()
  const json = text === '' ? {} : options.raw ? tryJson(text) : JSON.parse(text)
  return {
    status: response.status,
    headers: response.headers,
    json: json as Answer['json'],
  } satisfies Answer
}

/** The connection was reset before any answer came (see streamOversize). */
export class NoAnswerError extends Error {
  constructor(sent: number, cause: unknown) {
    super(`connection reset after ${sent} chunks, with no answer`, { cause })
  }
}

/**
 * Streams `chunks` chunks of 16 KiB without a Content-Length, one every few ms,
 * and reports the answer and how many chunks were written by the time it came.
 */
export function streamOversize(url: string, chunks: number) {
  const { hostname, port, pathname } = new URL(url)
  const chunk = Buffer.alloc(16 * 1024, 'x')
  // Valid JSON once whole, for platforms that parse every body before the function
  // (the Functions Framework): they then hand it over, and the receiver's 413 decides.
  const first = Buffer.concat([Buffer.from('{"pad":"'), chunk.subarray(8)])
  let sent = 0
  return new Promise<{ status: number; code: unknown; sent: number; reset: boolean }>(
    (resolve, reject) => {
      const req = request({
        host: hostname,
        port,
        path: pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'service-signature': 't=1,v1=00' },
      })
      req.on('response', async (res) => {
        const at = sent
        let text = ''
        try {
          for await (const part of res) text += String(part)
        } catch {
          // The server closed with our unread bytes in its buffer: the kernel may then
          // reset the connection, and a reset can drop the answer's body after its
          // status line arrived. The status is the answer; the code is lost with the body.
          req.destroy()
          resolve({ status: res.statusCode ?? 0, code: undefined, sent: at, reset: true })
          return
        }
        req.destroy()
        resolve({
          status: res.statusCode ?? 0,
          code: JSON.parse(text).error?.code,
          sent: at,
          reset: false,
        })
      })
      // The server stops reading and closes; writes after that may fail, which is the point.
      // A reset with no answer at all, though, is never an answer: fail fast, not at the
      // test's timeout.
      let answered = false
      req.on('response', () => {
        answered = true
      })
      req.on('error', (error) => {
        if (sent >= chunks) return reject(error)
        setTimeout(() => {
          if (!answered) reject(new NoAnswerError(sent, error))
        }, 2_000)
      })
      const pump = (): void => {
        if (req.destroyed) return
        if (sent >= chunks) {
          req.end('"}')
          return
        }
        sent++
        const next = sent === 1 ? first : chunk
        // Paced like a slow uplink: loopback socket buffers hold megabytes, so a sender
        // writing flat out could finish before any server had a chance to answer.
        req.write(next, () => setTimeout(pump, 2))
      }
      pump()
    },
  )
}

/**
 * How the receiver runs the handler: inline (the default), or handed to a queue
 * whose worker runs it. `start` returns the app plus `settle()`, which resolves
 * once every queued job has run (inline: at once).
 */
export interface Mode {
  /** The outcome of a delivery whose handler will run: `processed` or `queued`. */
  ok: 'processed' | 'queued'
  start(adapter: Adapter, options: ReceiverOptions): Promise<Running & { settle(): Promise<void> }>
}

/** The receiver runs the handler inside the request. */
export const inline: Mode = {
  ok: 'processed',
  start: async (adapter, options) => ({
    ...(await adapter.start(options)),
    settle: async () => {},
  }),
}

export interface Harness {
  url: string
  /** Resolves once every handler the answers so far promised has run. */
  settle(): Promise<void>
  /** The publisher's table: conversion id -> last status written by the handler. */
  conversions: Map<number, Conversion>
  /** Every handler call, in order, as `<event id> <status>`. */
  calls: string[]
  /** What the receiver logged. */
  logged: { level: 'warn' | 'error'; line: string }[]
}

type Behaviour = (conversion: Conversion, event: ConversionEvent) => unknown

/** A handler that signals it started (`inHandler`) and waits until `release()`. */
function gated() {
  let entered!: () => void
  const inHandler = new Promise<void>((resolve) => {
    entered = resolve
  })
  let release!: () => void
  const gate = new Promise<void>((resolve) => {
    release = resolve
  })
  const enterAndWait = async () => {
    entered()
    await gate
  }
  return { inHandler, release, enterAndWait }
}

/**
 * The shared case list for one adapter. `start` builds a fresh app per case with a
 * handler doing what a publisher's would (an upsert by conversion id); `behave`
 * runs first and may throw or wait.
 */
export function conformanceCases(adapter: Adapter, mode: Mode = inline): void {
  const { ok } = mode
  const running: Running[] = []
  afterEach(async () => {
    await Promise.all(running.splice(0).map((r) => r.close()))
  })

  async function start(
    behave?: Behaviour,
    options: Partial<ReceiverOptions> = {},
  ): Promise<Harness> {
    const conversions = new Map<number, Conversion>()
    const calls: string[] = []
    const logged: { level: 'warn' | 'error'; line: string }[] = []
    const app = await mode.start(adapter, {
      secret: SECRET,
      logger: {
        warn: (line: string) => logged.push({ level: 'warn', line }),
        error: (line: string) => logged.push({ level: 'error', line }),
      },
      ...options,
      onConversion: async (conversion, event) => {
        calls.push(`${event.id} ${conversion.status}`)
        await behave?.(conversion, event)
        conversions.set(conversion.id, conversion)
      },
    })
    running.push(app)
    return { url: app.url, settle: app.settle, conversions, calls, logged }
  }

  const now = () => Math.floor(Date.now() / 1000)

  it(`answers a valid delivery 200 ${ok} and runs the handler once`, async () => {
    const { url, settle, conversions, calls } = await start()
    const event = buildConversionEvent({ conversion: { id: 501, status: 'pending' } })
    const answer = await send(url, event)
    expect(answer).toMatchObject({ status: 200, json: { received: true, outcome: ok } })
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/)
    await settle()
    expect(calls).toEqual([`${event.id} pending`])
    expect(conversions.get(501)).toEqual(event.data.conversion)
  })

  it('answers a second delivery of the same event 200 duplicate without the handler', async () => {
    const { url, settle, calls } = await start()
    const event = buildConversionEvent()
    expect((await send(url, event)).json.outcome).toBe(ok)
    await settle()
    // The service signs each attempt afresh; only the event id makes it a duplicate.
    expect(await send(url, event, { attempt: 2 })).toMatchObject({
      status: 200,
      json: { outcome: 'duplicate' },
    })
    expect(calls).toHaveLength(1)
  })

  it('refuses a body changed after signing with 401 signature_mismatch, and logs one warning', async () => {
    const { url, calls, logged } = await start()
    const event = buildConversionEvent({ conversion: { commission: '0.00' } })
    const answer = await send(url, event, {
      tamper: (body) => body.replace('"0.00"', '"8.00"'),
    })
    expect(answer).toMatchObject({ status: 401, json: { error: { code: 'signature_mismatch' } } })
    expect(calls).toEqual([])
    expect(logged).toEqual([
      {
        level: 'warn',
        line: expect.stringMatching(
          new RegExp(
            `^affiliate-webhooks: 401 signature_mismatch ${event.id} \\(unverified id, attempt 1\\): `,
          ),
        ),
      },
    ])
    expect(logged[0]?.line).not.toMatch(/8\.00|whsec_/)
  })

  it('refuses a delivery signed 10 minutes ago with 401 timestamp_outside_tolerance', async () => {
    const { url, calls } = await start()
    const answer = await send(url, buildConversionEvent(), { timestamp: now() - 600 })
    expect(answer).toMatchObject({
      status: 401,
      json: { error: { code: 'timestamp_outside_tolerance' } },
    })
    expect(calls).toEqual([])
  })

  it('refuses a declared oversize body with 413 payload_too_large', async () => {
    const { url, calls } = await start(undefined, { maxBodyBytes: 4096 })
    const event = buildConversionEvent()
    const answer = await send(url, { ...event, data: { ...event.data, pad: 'x'.repeat(8000) } })
    expect(answer).toMatchObject({ status: 413, json: { error: { code: 'payload_too_large' } } })
    expect(calls).toEqual([])
  })

  const buffered = adapter.buffersWholeBody === true
  it(`answers 413 to an undeclared (chunked) oversize body ${buffered ? 'once the platform has buffered it' : 'before the client has sent it all'}`, async () => {
    const { url, calls } = await start(undefined, { maxBodyBytes: 64 * 1024 })
    // 3.2 MB offered against a 64 KiB limit: the answer must come long before the end,
    // unless the platform takes the whole body before the handler can see it.
    // workerd behind Miniflare now and then resets a cold connection with no answer at
    // all (test/README.md): one more try on a fresh connection, which must then answer.
    const attempt = () => streamOversize(url, 200)
    const { status, code, sent, reset } = await attempt().catch((error: unknown) => {
      if (error instanceof NoAnswerError && adapter.resetsWithoutAnswer === true) return attempt()
      throw error
    })
    expect(status).toBe(413)
    // Unless a connection reset took the body with it (see streamOversize).
    if (!reset) expect(code).toBe('payload_too_large')
    if (buffered) expect(sent).toBe(200)
    else expect(sent).toBeLessThan(200)
    expect(calls).toEqual([])
  })

  it('accepts Content-Type: application/json; charset=utf-8', async () => {
    const { url, settle, calls } = await start()
    const answer = await send(url, buildConversionEvent(), {
      headers: { 'content-type': 'application/json; charset=utf-8' },
    })
    expect(answer).toMatchObject({ status: 200, json: { outcome: ok } })
    await settle()
    expect(calls).toHaveLength(1)
  })

  it('verifies a body with multi-byte UTF-8 byte for byte and hands it over intact', async () => {
    const notes: unknown[] = []
    const { url, settle } = await start((_conversion, event) => {
      notes.push((event.data as { note?: unknown }).note)
    })
    const event = buildConversionEvent({ conversion: { currency: 'JPY', saleAmount: '1200' } })
    const note = 'Café 東京 — 🎉 ünïcödé'
    const answer = await send(url, { ...event, data: { ...event.data, note } })
    expect(answer).toMatchObject({ status: 200, json: { outcome: ok } })
    await settle()
    expect(notes).toEqual([note])
  })

  if (ok === 'processed') inlineOnlyCases()
  else queuedOnlyCases()

  it('drops an older update arriving after a newer one as 200 stale', async () => {
    const { url, settle, conversions, calls } = await start()
    const created = Date.now() - 3_600_000
    const pending = buildConversionEvent({
      createdAt: created,
      conversion: { id: 503, status: 'pending' },
    })
    const approved = buildConversionEvent({
      type: 'conversion.updated',
      createdAt: created + 60_000,
      conversion: { id: 503, status: 'approved' },
    })
    expect((await send(url, approved)).json.outcome).toBe(ok)
    await settle()
    expect(await send(url, pending)).toMatchObject({ status: 200, json: { outcome: 'stale' } })
    await settle()
    expect(calls).toEqual([`${approved.id} approved`])
    expect(conversions.get(503)?.status).toBe('approved')
  })

  function inlineOnlyCases() {
    it('logs nothing with logger: false', async () => {
      const { url, logged } = await start(
        () => {
          throw new Error('down')
        },
        { logger: false },
      )
      expect((await send(url, buildConversionEvent())).status).toBe(500)
      expect(logged).toEqual([])
    })

    it('answers 500 handler_failed when the handler throws, then 200 processed on the retry', async () => {
      let failures = 1
      const { url, conversions, calls, logged } = await start(() => {
        if (failures-- > 0) throw new Error('database is down')
      })
      const event = buildConversionEvent({ conversion: { id: 502 } })
      const failed = await send(url, event)
      expect(failed).toMatchObject({ status: 500, json: { error: { code: 'handler_failed' } } })
      // The app's log gets exactly one line: status, code, event id, the exception and its stack.
      expect(logged).toHaveLength(1)
      expect(logged[0]?.level).toBe('error')
      expect(logged[0]?.line).toMatch(
        new RegExp(
          `^affiliate-webhooks: 500 handler_failed ${event.id} \\(conversion.created, attempt 1\\): handler threw Error: database is down\\n\\s+at `,
        ),
      )
      expect(logged[0]?.line).not.toContain(SECRET)
      // Nothing about the failure leaks into the answer the service stores.
      expect(JSON.stringify(failed.json)).not.toContain('database is down')
      expect(conversions.has(502)).toBe(false)
      expect(await send(url, event, { attempt: 2 })).toMatchObject({
        status: 200,
        json: { outcome: 'processed' },
      })
      expect(calls).toHaveLength(2)
      expect(conversions.get(502)?.status).toBe('pending')
    })

    it('answers 409 event_in_progress to a duplicate arriving while the first is handled', async () => {
      const { inHandler, release, enterAndWait } = gated()
      const { url, calls } = await start(enterAndWait)
      const event = buildConversionEvent()
      const first = send(url, event)
      await inHandler
      expect(await send(url, event, { attempt: 2 })).toMatchObject({
        status: 409,
        json: { error: { code: 'event_in_progress' } },
      })
      release()
      expect(await first).toMatchObject({ status: 200, json: { outcome: 'processed' } })
      expect(calls).toHaveLength(1)
    })
  }

  function queuedOnlyCases() {
    it('answers 200 queued when the handler throws; the worker retries it until it succeeds', async () => {
      let failures = 1
      const { url, settle, conversions, calls } = await start(() => {
        if (failures-- > 0) throw new Error('database is down')
      })
      const event = buildConversionEvent({ conversion: { id: 502 } })
      expect(await send(url, event)).toMatchObject({ status: 200, json: { outcome: 'queued' } })
      await settle()
      expect(calls).toHaveLength(2)
      expect(conversions.get(502)?.status).toBe('pending')
    })

    it('answers a duplicate arriving while the first is handled 200 queued, without a second run', async () => {
      const { inHandler, release, enterAndWait } = gated()
      const { url, settle, calls } = await start(enterAndWait)
      const event = buildConversionEvent()
      expect((await send(url, event)).json.outcome).toBe('queued')
      await inHandler
      expect(await send(url, event, { attempt: 2 })).toMatchObject({
        status: 200,
        json: { outcome: 'queued' },
      })
      release()
      await settle()
      expect(calls).toHaveLength(1)
    })
  }

  it('refuses a delivery without the signature header with 400 missing_signature', async () => {
    const { url, calls } = await start()
    const event = buildConversionEvent()
    expect(await send(url, event, { headers: { 'service-signature': undefined } })).toMatchObject({
      status: 400,
      json: { error: { code: 'missing_signature' } },
    })
    // Not even a Content-Type: still the receiver's answer, not the framework's,
    // unless the framework refuses such a POST itself (never a 2xx either way).
    const bare = send(url, event, {
      headers: {
        'service-signature': undefined,
        'service-event-id': undefined,
        'service-delivery-attempt': undefined,
        'content-type': undefined,
      },
      raw: true,
    })
    const refusedBy = adapter.refusesPostWithoutContentType
    if (refusedBy === undefined) {
      expect(await bare).toMatchObject({
        status: 400,
        json: { error: { code: 'missing_signature' } },
      })
    } else {
      expect((await bare).status).toBe(refusedBy)
    }
    expect(calls).toEqual([])
  })

  it('answers other methods 405 method_not_allowed with Allow: POST', async () => {
    const { url, calls } = await start()
    const answer = await send(url, buildConversionEvent(), { method: 'GET', raw: true })
    if (adapter.platformAnswersOtherMethods) {
      expect(answer.status).toBe(405)
    } else {
      expect(answer).toMatchObject({
        status: 405,
        json: { error: { code: 'method_not_allowed' } },
      })
      expect(answer.headers.get('allow')).toBe('POST')
    }
    expect(calls).toEqual([])
  })
}

/** Runs the shared case list against every adapter, one describe block each. */
export function forEachAdapter(adapters: Adapter[], cases: (adapter: Adapter) => void): void {
  for (const adapter of adapters) describe(adapter.name, () => cases(adapter))
}

import { once } from 'node:events'
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http'
import { request as httpsRequest } from 'node:https'
import type { AddressInfo } from 'node:net'
import { DEFAULT_MAX_BODY_BYTES } from '@affiliate-webhooks/core/internal'
import { ANSWER_TIMEOUT_MS } from '../delivery/schedule.js'
import { type CapturedDelivery, captureOf, writeCapture } from './capture-file.js'

/** What the relay did with one delivery: one line's worth. */
export interface RelayedDelivery {
  receivedAt: Date
  eventId: string | undefined
  eventType: string | undefined
  attempt: string | undefined
  /** The app's status, or the relay's own 413/502/504. */
  status: number
  durationMs: number
  /** Why the app gave no answer. */
  error?: string
  /** Where `--save` wrote it. */
  savedTo?: string
}

/** Options of {@link createRelay} and {@link startRelay}: where to forward, what to keep. */
export interface RelayOptions {
  /** The app's webhook URL: every delivery goes there, whatever path it came to. */
  forwardTo: string
  /** Write each delivery to one file in this directory. */
  saveDir?: string | undefined
  /** Larger bodies get 413 and are not forwarded. Default 1 MiB, the service's limit. */
  maxBodyBytes?: number
  /** How long the app has to answer. Default 10 s, the service's limit. */
  timeoutMs?: number
  onDelivery?: (delivery: RelayedDelivery) => void
}

// Hop-by-hop headers belong to one connection; the rest pass unchanged.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
])

function headersOf(message: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(message.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value
  }
  return headers
}

function passable(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) if (!HOP_BY_HOP.has(name)) out[name] = value
  return out
}

/** Reads a body up to `limit` bytes; undefined when it is larger. */
async function readBounded(req: IncomingMessage, limit: number): Promise<Uint8Array | undefined> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > limit) return undefined
    chunks.push(chunk as Buffer)
  }
  return new Uint8Array(Buffer.concat(chunks))
}

function describeBody(body: Uint8Array): { id?: string; type?: string } {
  try {
    const parsed = JSON.parse(Buffer.from(body).toString('utf8')) as {
      id?: unknown
      type?: unknown
    }
    return {
      ...(typeof parsed.id === 'string' ? { id: parsed.id } : {}),
      ...(typeof parsed.type === 'string' ? { type: parsed.type } : {}),
    }
  } catch {
    return {}
  }
}

interface Forwarded {
  status: number
  headers: Record<string, string>
  body: Buffer
}

/** Sends the captured request to the app, byte for byte, and reads its answer. */
function forward(target: URL, capture: CapturedDelivery, body: Uint8Array, timeoutMs: number) {
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest
  return new Promise<Forwarded>((resolve, reject) => {
    const req = send(
      target,
      {
        method: capture.method,
        headers: { ...passable(capture.headers), 'content-length': String(body.byteLength) },
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 502,
            headers: headersOf(res),
            body: Buffer.concat(chunks),
          }),
        )
        res.on('error', reject)
      },
    )
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)))
    req.on('error', reject)
    req.end(body)
  })
}

const errorBody = (code: string, message: string) => JSON.stringify({ error: { code, message } })

/**
 * `listen`: a local relay between the service (or `send`, or the emulator) and
 * your app. Each delivery goes to the app unchanged, the app's answer goes back
 * unchanged, and with `saveDir` the delivery is written to a file first, so a
 * failure seen once can be verified and re-sent. When the app does not answer
 * the sender gets 502 or 504, never a 2xx: nothing was handled.
 */
export function createRelay(options: RelayOptions): Server {
  const target = new URL(options.forwardTo)
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  const timeoutMs = options.timeoutMs ?? ANSWER_TIMEOUT_MS
  return createServer(async (req, res) => {
    const receivedAt = new Date()
    const started = performance.now()
    const headers = headersOf(req)
    const report = (status: number, extra: Partial<RelayedDelivery> = {}, body?: Uint8Array) => {
      const described = body ? describeBody(body) : {}
      options.onDelivery?.({
        receivedAt,
        eventId: headers['service-event-id'] ?? described.id,
        eventType: described.type,
        attempt: headers['service-delivery-attempt'],
        status,
        durationMs: performance.now() - started,
        ...extra,
      })
    }
    const body = await readBounded(req, limit).catch(() => undefined)
    if (body === undefined) {
      res.writeHead(413, { 'content-type': 'application/json', connection: 'close' })
      res.end(
        errorBody('payload_too_large', `The body is larger than ${limit} bytes; not forwarded.`),
      )
      report(413, { error: 'body over the limit, not forwarded' })
      return
    }
    const capture = captureOf({
      method: req.method ?? 'POST',
      path: req.url ?? '/',
      headers,
      body,
      receivedAt,
    })
    let savedTo: string | undefined
    if (options.saveDir !== undefined) {
      // Saved before forwarding: a delivery that crashes the app is the one worth keeping.
      savedTo = await writeCapture(options.saveDir, capture).catch(
        (error: Error) => `(not saved: ${error.message})`,
      )
    }
    try {
      const answer = await forward(target, capture, body, timeoutMs)
      res.writeHead(answer.status, passable(answer.headers))
      res.end(answer.body)
      report(answer.status, savedTo ? { savedTo } : {}, body)
    } catch (error) {
      const message = (error as Error).message
      const timedOut = message.startsWith('no answer within')
      res.writeHead(timedOut ? 504 : 502, { 'content-type': 'application/json' })
      res.end(
        errorBody(
          timedOut ? 'forward_timeout' : 'forward_failed',
          `The app at ${target.host} did not answer: ${message}`,
        ),
      )
      report(timedOut ? 504 : 502, { error: message, ...(savedTo ? { savedTo } : {}) }, body)
    }
  })
}

/** Starts a relay; resolves to it and its address. */
export async function startRelay(options: RelayOptions & { port: number; host: string }) {
  const server = createRelay(options)
  server.listen(options.port, options.host)
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  return {
    server,
    url: `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`,
  }
}

import type { IncomingMessage } from 'node:http'
import type { ReceiverOptions } from '@affiliate-webhooks/core'
import {
  createAdapter,
  keptBody,
  rawBodyUnavailable,
  tooLarge,
} from '@affiliate-webhooks/core/internal'
import { readRawBody as readNodeBody } from '@affiliate-webhooks/node'
import {
  defineEventHandler,
  type EventHandler,
  type H3Event,
  setResponseHeaders,
  setResponseStatus,
} from 'h3'

/** Options of {@link affiliateWebhook}: the receiver's (secret, handlers, store, limits). */
export type H3WebhookOptions<Tx = undefined> = ReceiverOptions<Tx>

/** What the handler returns to h3: the answer's JSON text (empty when the client went away). */
export type H3WebhookHandler = EventHandler<{ body?: never }, Promise<string>>

/**
 * Where h3 keeps the bytes its body readers took (`readBody`, `readRawBody`):
 * a promise of a Buffer under this symbol on the Node request. h3 1.x names it
 * with `Symbol.for`, so it is the same symbol here.
 */
const H3_RAW_BODY = Symbol.for('h3RawBody')

type H3Request = IncomingMessage & { [H3_RAW_BODY]?: unknown; body?: unknown; rawBody?: unknown }

/**
 * The exact bytes: those h3 kept when something called readBody/readRawBody
 * first, else read here from the stream with the limit, and kept where h3
 * looks for them, so the app's own readBody after the webhook still works. A
 * stream someone else read (a Web Request of the event) is an answer at once.
 */
async function body(event: H3Event, limit: number, signal: AbortSignal): Promise<Uint8Array> {
  const req = event.node.req as H3Request
  const pending = req[H3_RAW_BODY]
  if (pending !== undefined) {
    // h3 is still reading them from the client: the core's body deadline bounds the wait.
    const kept = await pending
    if (!(kept instanceof Uint8Array)) throw rawBodyUnavailable('h3', 'consumed')
    if (kept.byteLength > limit) throw tooLarge(limit)
    return kept
  }
  const kept = keptBody(req, limit)
  if (kept !== undefined) return kept
  // A connect-style parser left an object: h3 itself would re-serialise it, which never verifies.
  if (req.body !== undefined) throw rawBodyUnavailable('h3', 'consumed')
  const bytes = await readNodeBody(req, limit, { adapter: 'h3', signal })
  req[H3_RAW_BODY] = Promise.resolve(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))
  return bytes
}

/**
 * A Nuxt/Nitro server route or an h3 app's handler:
 * `export default affiliateWebhook({ secret, onConversion })` in
 * `server/routes/hooks.ts`, or `app.use('/hooks', affiliateWebhook(opts))`.
 * Answers POST only.
 */
export function affiliateWebhook<Tx = undefined>(options: H3WebhookOptions<Tx>): H3WebhookHandler {
  // Nitro loads route modules at build time without the runtime secrets: the
  // receiver (which checks `secret`) is made on the first request.
  const adapter = createAdapter<H3Event, unknown, Tx>(() => options, {
    name: '@affiliate-webhooks/h3',
    method: (event) => event.node.req.method,
    headers: (event) => event.node.req.headers,
    body,
  })
  return defineEventHandler(async (event) => {
    const result = await adapter.handle(event)
    if (result === undefined) {
      // The client went away mid-body: nothing to answer.
      event.node.req.destroy()
      return ''
    }
    setResponseStatus(event, result.status)
    setResponseHeaders(event, result.headers)
    return result.body
  }) as H3WebhookHandler
}

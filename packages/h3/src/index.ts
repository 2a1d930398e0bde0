import type { IncomingMessage } from 'node:http'
import type { ReceiverOptions } from '@affiliate-webhooks/core'
import {
  createAdapter,
  keptBody,
  rawBodyUnavailable,
  readWebBody,
  tooLarge,
} from '@affiliate-webhooks/core/internal'
import { readRawBody as readNodeBody } from '@affiliate-webhooks/node'
import { defineEventHandler, type H3Event, setResponseHeaders, setResponseStatus } from 'h3'

/** Options of {@link affiliateWebhook}: the receiver's (secret, handlers, store, limits). */
export type H3WebhookOptions<Tx = undefined> = ReceiverOptions<Tx>

/**
 * The handler h3 calls: it takes h3 1's `H3Event` (Nuxt 4, Nitro 2) or h3 2's
 * (Nitro 3), whose `req` is a Web `Request`, and returns the answer: on h3 1 its
 * JSON text (empty when the client went away), on h3 2 a Web `Response`.
 */
export type H3WebhookHandler = {
  /** h3 1's mark of a handler made by `defineEventHandler`. */
  __is_handler__?: true
  (event: H3Event | { req: Request }): Promise<string | Response>
}

/**
 * Where h3 keeps the bytes its body readers took (`readBody`, `readRawBody`):
 * a promise of a Buffer under this symbol on the Node request. h3 1.x names it
 * with `Symbol.for`, so it is the same symbol here.
 */
const H3_RAW_BODY = Symbol.for('h3RawBody')

type H3Request = IncomingMessage & { [H3_RAW_BODY]?: unknown; body?: unknown; rawBody?: unknown }

/**
 * h3 2's event (Nitro 3, standalone h3 2 apps): `event.req` is a Web `Request`
 * (on Node, srvx's over the IncomingMessage). h3 1's event has `event.node.req`.
 */
type H3v2Event = { req: Request }

function isH3v2(event: H3Event | H3v2Event): event is H3v2Event {
  const req = (event as { req?: unknown }).req
  return typeof req === 'object' && req !== null && typeof (req as Request).clone === 'function'
}

/**
 * h3 1: the exact bytes h3 kept when something called readBody/readRawBody
 * first, else read here from the stream with the limit, and kept where h3
 * looks for them, so the app's own readBody after the webhook still works. A
 * stream someone else read (a Web Request of the event) is an answer at once.
 */
async function nodeBody(event: H3Event, limit: number, signal: AbortSignal): Promise<Uint8Array> {
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
 * The exact bytes, on either major: h3 2 keeps no bytes for a later reader
 * (its readBody reads `event.req` itself), so there a body read or locked before
 * the route is `raw_body_unavailable` at once; a slow one ends at the body deadline.
 */
function body(event: H3Event | H3v2Event, limit: number, signal: AbortSignal): Promise<Uint8Array> {
  return isH3v2(event)
    ? readWebBody(event.req, limit, 'h3', signal)
    : nodeBody(event, limit, signal)
}

/**
 * A Nuxt/Nitro server route or an h3 app's handler, on h3 1 or h3 2:
 * `export default affiliateWebhook({ secret, onConversion })` in
 * `server/routes/hooks.ts`, `app.all('/hooks', affiliateWebhook(opts))` in an
 * h3 2 app, or `app.use(createRouter().use('/hooks', affiliateWebhook(opts)))`
 * in an h3 1 app. Answers POST only.
 */
export function affiliateWebhook<Tx = undefined>(options: H3WebhookOptions<Tx>): H3WebhookHandler {
  // Nitro loads route modules at build time without the runtime secrets: the
  // receiver (which checks `secret`) is made on the first request.
  const adapter = createAdapter<H3Event | H3v2Event, unknown, Tx>(() => options, {
    name: '@affiliate-webhooks/h3',
    method: (event) => (isH3v2(event) ? event.req.method : event.node.req.method),
    headers: (event) => (isH3v2(event) ? event.req.headers : event.node.req.headers),
    body,
  })
  return defineEventHandler(async (event: H3Event | H3v2Event) => {
    const result = await adapter.handle(event)
    if (isH3v2(event)) {
      // h3 2 sends a returned Response as it is; a client gone mid-body can read nothing.
      return result === undefined
        ? new Response(null, { status: 400 })
        : new Response(result.body, { status: result.status, headers: result.headers })
    }
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

import type { ReceiveResult, Receiver, ReceiverOptions } from '@affiliate-webhooks/core'
import { lazyReceiver } from './lazy-receiver.js'

/** Options of both Next handlers: the receiver's (secret, handlers, store, limits). */
export type NextWebhookOptions = ReceiverOptions

/** An App Router route handler: `export const POST = affiliateWebhook(opts)`. */
export type AppRouteHandler = (request: Request) => Promise<Response>

const respond = (result: ReceiveResult) =>
  new Response(result.body, { status: result.status, headers: result.headers })

/** Reads a body of unknown length, giving up (undefined) as soon as it passes `limit`. */
async function readLimited(body: ReadableStream<Uint8Array>, limit: number) {
  const reader = body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    size += read.value.byteLength
    if (size > limit) {
      // Not cancel(): on Node, Next streams the IncomingMessage into the Request, and
      // cancelling destroys the socket before the 413 can reach the service.
      reader.releaseLock()
      return undefined
    }
    chunks.push(read.value)
  }
  const bytes = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  return bytes
}

async function rawBodyOf(request: Request, receiver: Receiver) {
  if (request.bodyUsed) {
    throw new Error(
      'The request body was read before the webhook handler, so its exact bytes are gone. Pass the untouched request (read a request.clone() elsewhere if you must).',
    )
  }
  const declared = request.headers.get('content-length')
  if (declared !== null) {
    if (Number(declared) > receiver.maxBodyBytes) return undefined
    // The runtime holds a declared body to its length, so reading it whole is bounded.
    return new Uint8Array(await request.arrayBuffer())
  }
  return request.body === null
    ? new Uint8Array(0)
    : readLimited(request.body, receiver.maxBodyBytes)
}

/**
 * App Router: `export const POST = affiliateWebhook({ secret, onConversion })` in
 * `app/.../route.ts`. Web `Request` in, `Response` out, nothing Node-only, so the
 * route also runs on the Edge runtime (where the core uses Web Crypto).
 */
export function affiliateWebhook(options: NextWebhookOptions): AppRouteHandler {
  const receiverOf = lazyReceiver(options)
  return async (request) => {
    const receiver = receiverOf()
    if (request.method !== 'POST') return respond(receiver.reject('method_not_allowed'))
    let rawBody: Uint8Array | undefined
    try {
      rawBody = await rawBodyOf(request, receiver)
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      return respond(receiver.reject('raw_body_unavailable', message))
    }
    if (rawBody === undefined) return respond(receiver.reject('payload_too_large'))
    return respond(await receiver.receive({ headers: request.headers, rawBody }))
  }
}

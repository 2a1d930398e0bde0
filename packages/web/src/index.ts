import {
  type AdapterOptions,
  BoundedBody,
  createAdapter,
  type ReceiveResult,
  type ReceiverOptions,
  tooLarge,
  WebhookError,
} from '@affiliate-webhooks/core'

/** Options of {@link affiliateWebhook}: the receiver's (secret, handlers, store, limits). */
export type WebWebhookOptions<Tx = undefined> = ReceiverOptions<Tx>

/**
 * A fetch handler: `Bun.serve({ fetch })`, `Deno.serve(handler)`, a Worker's
 * `fetch(request, env)`, Hono's `c.req.raw`. The second argument is handed to the
 * options function, when the options are one.
 */
export type FetchHandler<Env = unknown> = (request: Request, env?: Env) => Promise<Response>

const UNAVAILABLE_MESSAGE =
  'The request body was read before the webhook handler, so its exact bytes are gone. Pass the untouched request (read a request.clone() elsewhere if you must).'

/** The core's answer as a Web Response. */
export function toResponse(result: ReceiveResult): Response {
  return new Response(result.body, { status: result.status, headers: result.headers })
}

/**
 * The exact bytes of a Web request's body, at most `limit` of them: a declared
 * length past the limit is refused before reading, a streamed body is read
 * until it passes the limit and no further.
 */
export async function readRequestBody(request: Request, limit: number): Promise<Uint8Array> {
  if (request.bodyUsed) throw new WebhookError('raw_body_unavailable', UNAVAILABLE_MESSAGE)
  const declared = request.headers.get('content-length')
  if (declared !== null) {
    // A length that is not a number is not trusted to bound the read: not <= limit.
    if (!(Number(declared) <= limit)) throw tooLarge(limit)
    // The runtime holds a declared body to its length, so reading it whole is bounded.
    return new Uint8Array(await request.arrayBuffer())
  }
  if (request.body === null) return new Uint8Array(0)
  const reader = request.body.getReader()
  const body = new BoundedBody(limit)
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    if (!body.add(read.value)) {
      // Not cancel(): on Node, Next streams the IncomingMessage into the Request, and
      // cancelling destroys the socket before the 413 can reach the service.
      reader.releaseLock()
      throw tooLarge(limit)
    }
  }
  return body.bytes()
}

/**
 * `affiliateWebhook({ secret, onConversion })`: Web `Request` in, `Response` out,
 * nothing Node-only on its import path. Options may be a function of the second
 * argument (a Worker's `env`), read once, on the first request.
 */
export function affiliateWebhook<Env = unknown, Tx = undefined>(
  options: AdapterOptions<Env, Tx>,
): FetchHandler<Env> {
  const adapter = createAdapter<Request, Env, Tx>(options, {
    name: '@affiliate-webhooks/web',
    method: (request) => request.method,
    headers: (request) => request.headers,
    body: readRequestBody,
  })
  return async (request, env) => {
    const result = await adapter.handle(request, env)
    // A body that failed mid-read (the client went away) gets no answer it could read.
    return result === undefined ? new Response(null, { status: 400 }) : toResponse(result)
  }
}

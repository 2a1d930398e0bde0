import type { ReceiveResult, ReceiverOptions } from '@affiliate-webhooks/core'
import { type AdapterOptions, createAdapter, readWebBody } from '@affiliate-webhooks/core/internal'

/** Options of {@link affiliateWebhook}: the receiver's (secret, handlers, store, limits). */
export type WebWebhookOptions<Tx = undefined> = ReceiverOptions<Tx>

/**
 * A fetch handler: `Bun.serve({ fetch })`, `Deno.serve(handler)`, a Worker's
 * `fetch(request, env)`, Hono's `c.req.raw`. The second argument is handed to the
 * options function, when the options are one.
 */
export type FetchHandler<Env = unknown> = (request: Request, env?: Env) => Promise<Response>

/** The core's answer as a Web Response. */
export function toResponse(result: ReceiveResult): Response {
  return new Response(result.body, { status: result.status, headers: result.headers })
}

/**
 * The exact bytes of a Web request's body, at most `limit` of them: a declared
 * length past the limit is refused before reading, a streamed body is read
 * until it passes the limit and no further. A body already read (`bodyUsed`) or
 * held by another reader (a locked stream) is `raw_body_unavailable` at once,
 * never a wait; a slow one is read until `signal` aborts, when the reader lets
 * go of the stream and rejects with the signal's reason.
 */
export function readRequestBody(
  request: Request,
  limit: number,
  signal?: AbortSignal,
): Promise<Uint8Array> {
  return readWebBody(request, limit, 'web', signal)
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
    // The bytes counted, so a deadline with none read names the likelier cause.
    body: (request, limit, signal, progress) =>
      readWebBody(request, limit, 'web', signal, progress),
  })
  return async (request, env) => {
    const result = await adapter.handle(request, env)
    // A body that failed mid-read (the client went away) gets no answer it could read.
    return result === undefined ? new Response(null, { status: 400 }) : toResponse(result)
  }
}

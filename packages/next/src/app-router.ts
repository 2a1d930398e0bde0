import type { ReceiverOptions } from '@affiliate-webhooks/core'
import { createAdapter, readWebBody } from '@affiliate-webhooks/core/internal'
import { toResponse } from '@affiliate-webhooks/web'

/** Options of both Next handlers: the receiver's (secret, handlers, store, limits). */
export type NextWebhookOptions<Tx = undefined> = ReceiverOptions<Tx>

/** An App Router route handler: `export const POST = affiliateWebhook(opts)`. */
export type AppRouteHandler = (request: Request) => Promise<Response>

/**
 * App Router: `export const POST = affiliateWebhook({ secret, onConversion })` in
 * `app/.../route.ts`. Web `Request` in, `Response` out, as @affiliate-webhooks/web
 * does it, nothing Node-only, so the route also runs on the Edge runtime (where
 * the core uses Web Crypto). A body read before it is answered naming this
 * adapter (`next`) and Next's own fix.
 */
export function affiliateWebhook<Tx = undefined>(options: NextWebhookOptions<Tx>): AppRouteHandler {
  // `next build` loads route modules without the runtime secrets: the receiver
  // (which checks `secret`) is made on the first request.
  const adapter = createAdapter<Request, undefined, Tx>(() => options, {
    name: '@affiliate-webhooks/next',
    method: (request) => request.method,
    headers: (request) => request.headers,
    body: (request, limit, signal, progress) =>
      readWebBody(request, limit, 'next', signal, progress),
  })
  return async (request) => {
    const result = await adapter.handle(request, undefined)
    // A body that failed mid-read (the client went away) gets no answer it could read.
    return result === undefined ? new Response(null, { status: 400 }) : toResponse(result)
  }
}

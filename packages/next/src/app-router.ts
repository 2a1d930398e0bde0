import type { ReceiverOptions } from '@affiliate-webhooks/core'
import { affiliateWebhook as webWebhook } from '@affiliate-webhooks/web'

/** Options of both Next handlers: the receiver's (secret, handlers, store, limits). */
export type NextWebhookOptions<Tx = undefined> = ReceiverOptions<Tx>

/** An App Router route handler: `export const POST = affiliateWebhook(opts)`. */
export type AppRouteHandler = (request: Request) => Promise<Response>

/**
 * App Router: `export const POST = affiliateWebhook({ secret, onConversion })` in
 * `app/.../route.ts`. The fetch handler of @affiliate-webhooks/web: Web `Request`
 * in, `Response` out, nothing Node-only, so the route also runs on the Edge
 * runtime (where the core uses Web Crypto).
 */
export function affiliateWebhook<Tx = undefined>(options: NextWebhookOptions<Tx>): AppRouteHandler {
  // `next build` loads route modules without the runtime secrets: the receiver
  // (which checks `secret`) is made on the first request.
  const handler = webWebhook(() => options)
  return (request) => handler(request)
}

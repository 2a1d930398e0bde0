import type { IncomingMessage } from 'node:http'
import type { ReceiveResult, ReceiverOptions } from '@affiliate-webhooks/core'
import { createAdapter, keptBody } from '@affiliate-webhooks/core/internal'
import { readRawBody } from '@affiliate-webhooks/node'

/** Options of {@link affiliateWebhook}: the receiver's, plus `path` for `app.use`. */
export interface KoaWebhookOptions<Tx = undefined> extends ReceiverOptions<Tx> {
  /** Answer only this path; other requests go on to `next()`. Not needed behind a router. */
  path?: string | undefined
}

/**
 * The parts of a Koa 2 or 3 context the middleware uses; Koa's own
 * `ParameterizedContext` fits, so `@types/koa` is not needed to use it.
 */
export interface KoaContextLike {
  method: string
  path: string
  req: IncomingMessage
  /** `body` and `rawBody` are where koa-bodyparser and @koa/bodyparser leave what they read. */
  request: { method: string; body?: unknown; rawBody?: unknown }
  status: number
  body: unknown
  respond?: boolean | undefined
  set(fields: Record<string, string>): void
}

/** A Koa middleware: `app.use(...)`, `router.post('/hooks', ...)`. */
export type KoaWebhookMiddleware = (
  ctx: KoaContextLike,
  next: () => Promise<unknown>,
) => Promise<void>

function send(ctx: KoaContextLike, result: ReceiveResult): void {
  ctx.status = result.status
  // Content-Type first: Koa only guesses one for a string body when none is set.
  ctx.set(result.headers)
  ctx.body = result.body
}

/**
 * `app.use(affiliateWebhook({ path: '/hooks', secret, onConversion }))`, or
 * `router.post('/hooks', affiliateWebhook(opts))`. Reads the body from `ctx.req`
 * itself, or uses the `rawBody` a body parser kept; answers POST only.
 */
export function affiliateWebhook<Tx = undefined>(
  options: KoaWebhookOptions<Tx>,
): KoaWebhookMiddleware {
  const { path, ...receiverOptions } = options
  const adapter = createAdapter<KoaContextLike, unknown, Tx>(receiverOptions, {
    name: '@affiliate-webhooks/koa',
    method: (ctx) => ctx.method,
    headers: (ctx) => ctx.req.headers,
    body: async (ctx, limit, signal) =>
      keptBody(ctx.request, limit) ?? readRawBody(ctx.req, limit, { adapter: 'koa', signal }),
  })
  return async (ctx, next) => {
    if (path !== undefined && ctx.path !== path) {
      await next()
      return
    }
    const result = await adapter.handle(ctx)
    if (result) return send(ctx, result)
    // The client went away mid-body: nothing to answer, and Koa must not try to.
    ctx.respond = false
    ctx.req.destroy()
  }
}

import type { ReceiveResult, ReceiverOptions } from '@affiliate-webhooks/core'
import { createAdapter, keptBody, rawBodyUnavailable } from '@affiliate-webhooks/core/internal'
import { readRawBody } from '@affiliate-webhooks/node'
import type { FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify'

/** Options of the {@link affiliateWebhook} plugin: the receiver's, plus the route's path. */
export interface FastifyWebhookOptions<Tx = undefined> extends ReceiverOptions<Tx> {
  /** The route the plugin adds, e.g. '/hooks' (under the register prefix, if any). */
  path: string
}

/** A Fastify route handler, as {@link affiliateWebhookHandler} returns it. */
export type FastifyWebhookHandler = (request: FastifyRequest, reply: FastifyReply) => Promise<void>

const NAME = '@affiliate-webhooks/fastify'
function send(reply: FastifyReply, result: ReceiveResult | undefined): void {
  if (result) reply.code(result.status).headers(result.headers).send(result.body)
  else {
    // The client went away mid-body: nothing to answer, and Fastify must not try.
    reply.hijack()
    reply.raw.destroy()
  }
}

const method = (request: FastifyRequest) => request.method
const headers = (request: FastifyRequest) => request.headers

/**
 * For a route the app defines itself with fastify-raw-body:
 * `app.post('/hooks', { config: { rawBody: true } }, affiliateWebhookHandler(opts))`.
 */
export function affiliateWebhookHandler<Tx = undefined>(
  options: ReceiverOptions<Tx>,
): FastifyWebhookHandler {
  const adapter = createAdapter<FastifyRequest, unknown, Tx>(options, {
    name: NAME,
    method,
    headers,
    body: (request, limit) => {
      const kept = keptBody(request, limit)
      if (kept === undefined) throw rawBodyUnavailable('fastify', 'consumed')
      return kept
    },
  })
  return async (request, reply) => send(reply, await adapter.handle(request))
}

/**
 * Fastify infers `register`'s options from the plugin's own type, so the plugin
 * cannot be generic: its handlers take any store's transaction as `ctx.tx`.
 * `affiliateWebhookHandler` types `ctx.tx` from the store.
 */
// biome-ignore lint/suspicious/noExplicitAny: the plugin's one untyped spot, explained above
type AnyStoreTx = any

/**
 * `app.register(affiliateWebhook, { path: '/hooks', secret, onConversion })`. Not
 * wrapped in fastify-plugin on purpose: its body parser stays inside this
 * plugin's context, so the app's JSON parsing elsewhere is untouched. That
 * parser reads nothing: the handler reads the stream itself, under the core's
 * limit and deadline (Fastify's own buffer parser has no deadline, and waits
 * for a stalled body forever).
 */
export const affiliateWebhook: FastifyPluginCallback<FastifyWebhookOptions<AnyStoreTx>> = (
  app,
  options,
  done,
) => {
  const { path, ...receiverOptions } = options
  const adapter = createAdapter<FastifyRequest, unknown, unknown>(receiverOptions, {
    name: NAME,
    method,
    headers,
    body: (request, limit, signal) =>
      readRawBody(request.raw, limit, { adapter: 'fastify', signal }),
  })
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', (_request, _payload, parsed) => parsed(null, undefined))
  app.all(path, async (request, reply) => send(reply, await adapter.handle(request)))
  done()
}

import {
  createReceiver,
  type ReceiveResult,
  type Receiver,
  type ReceiverOptions,
} from '@affiliate-webhooks/core'
import type { FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify'

/** Options of the {@link affiliateWebhook} plugin: the receiver's, plus the route's path. */
export interface FastifyWebhookOptions extends ReceiverOptions {
  /** The route the plugin adds, e.g. '/hooks' (under the register prefix, if any). */
  path: string
}

/** A Fastify route handler, as {@link affiliateWebhookHandler} returns it. */
export type FastifyWebhookHandler = (request: FastifyRequest, reply: FastifyReply) => Promise<void>

const UNAVAILABLE_MESSAGE =
  'This route has no raw body, so the signature cannot be checked. Register fastify-raw-body (ideally with encoding: false) and give the route config: { rawBody: true }, or let app.register(affiliateWebhook, { path }) add the route with its own body parser.'

const utf8 = new TextEncoder()

function send(reply: FastifyReply, result: ReceiveResult): void {
  reply.code(result.status).headers(result.headers).send(result.body)
}

/** The bytes fastify-raw-body kept (a Buffer, or a UTF-8 string with its default encoding). */
function keptBytes(request: FastifyRequest): Uint8Array | undefined {
  const { rawBody } = request as { rawBody?: unknown }
  if (rawBody instanceof Uint8Array) return rawBody
  if (typeof rawBody === 'string') return utf8.encode(rawBody)
  return request.body instanceof Uint8Array ? request.body : undefined
}

function handler(receiver: Receiver, bytes: (request: FastifyRequest) => Uint8Array | undefined) {
  let warned = false
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (request.method !== 'POST') return send(reply, receiver.reject('method_not_allowed'))
    const rawBody = bytes(request)
    if (rawBody === undefined) {
      // A setup mistake, not a bad delivery: say so once in the app's log, not per retry.
      if (!warned) request.log.error(UNAVAILABLE_MESSAGE)
      warned = true
      return send(reply, receiver.reject('raw_body_unavailable', UNAVAILABLE_MESSAGE))
    }
    send(reply, await receiver.receive({ headers: request.headers, rawBody }))
  }
}

/**
 * For a route the app defines itself with fastify-raw-body:
 * `app.post('/hooks', { config: { rawBody: true } }, affiliateWebhookHandler(opts))`.
 */
export function affiliateWebhookHandler(options: ReceiverOptions): FastifyWebhookHandler {
  return handler(createReceiver(options), keptBytes)
}

const EMPTY = new Uint8Array(0)

/**
 * `app.register(affiliateWebhook, { path: '/hooks', secret, onConversion })`. Not
 * wrapped in fastify-plugin on purpose: its buffer body parser and 413 answer stay
 * inside this plugin's context, so the app's JSON parsing elsewhere is untouched.
 */
export const affiliateWebhook: FastifyPluginCallback<FastifyWebhookOptions> = (
  app,
  options,
  done,
) => {
  const { path, ...receiverOptions } = options
  const receiver = createReceiver(receiverOptions)
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, parsed) =>
    parsed(null, body),
  )
  // Fastify stops reading past bodyLimit; the core words the answer, as for every adapter.
  app.setErrorHandler((error: { statusCode?: number }, _request, reply) => {
    if (error.statusCode !== 413) throw error
    send(reply, receiver.reject('payload_too_large'))
  })
  const bytes = (request: FastifyRequest) =>
    request.body instanceof Uint8Array ? request.body : EMPTY
  app.all(path, { bodyLimit: receiver.maxBodyBytes }, handler(receiver, bytes))
  done()
}

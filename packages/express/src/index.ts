import type { IncomingMessage } from 'node:http'
import type { ReceiverOptions } from '@affiliate-webhooks/core'
import { createNodeAdapter } from '@affiliate-webhooks/node'
import type { RequestHandler } from 'express'

/** Options of {@link affiliateWebhook}: the receiver's (secret, handlers, store, limits). */
export type ExpressWebhookOptions<Tx = undefined> = ReceiverOptions<Tx>

/**
 * `express.json({ verify: rawBodySaver })` keeps each body's exact bytes in
 * `req.rawBody`, so the webhook route still verifies after the app's JSON parser.
 */
export function rawBodySaver(req: IncomingMessage, _res: unknown, buf: Buffer): void {
  Object.assign(req, { rawBody: buf })
}

/**
 * `app.post('/hooks', affiliateWebhook({ secret, onConversion }))`. Reads the body
 * itself, or uses the bytes express.raw(), rawBodySaver or NestJS's `rawBody: true`
 * kept; answers POST only.
 */
export function affiliateWebhook<Tx = undefined>(
  options: ExpressWebhookOptions<Tx>,
): RequestHandler {
  const { answer } = createNodeAdapter(options, {
    name: '@affiliate-webhooks/express',
    adapter: 'express',
  })
  return (req, res) => void answer(req, res)
}

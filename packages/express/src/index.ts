import type { IncomingMessage } from 'node:http'
import { createReceiver, type ReceiverOptions } from '@affiliate-webhooks/core'
import { handleNodeRequest, sendResult } from '@affiliate-webhooks/node'
import type { RequestHandler } from 'express'

/** Options of {@link affiliateWebhook}: the receiver's (secret, handlers, store, limits). */
export type ExpressWebhookOptions = ReceiverOptions

const UNAVAILABLE_MESSAGE =
  'A body parser (express.json()?) read this request before the webhook handler, so its exact bytes are gone and the signature cannot be checked. Register the webhook route before app.use(express.json()), or keep the bytes with express.json({ verify: rawBodySaver }) (rawBodySaver from @affiliate-webhooks/express) or express.raw({ type: "application/json" }) on this route.'

/**
 * `express.json({ verify: rawBodySaver })` keeps each body's exact bytes in
 * `req.rawBody`, so the webhook route still verifies after the app's JSON parser.
 */
export function rawBodySaver(req: IncomingMessage, _res: unknown, buf: Buffer): void {
  Object.assign(req, { rawBody: buf })
}

/**
 * `app.post('/hooks', affiliateWebhook({ secret, onConversion }))`. Reads the body
 * itself, or uses the bytes express.raw() or rawBodySaver kept; answers POST only.
 */
export function affiliateWebhook(options: ExpressWebhookOptions): RequestHandler {
  const receiver = createReceiver(options)
  let warned = false
  return (req, res) => {
    if (req.method !== 'POST') {
      sendResult(res, receiver.reject('method_not_allowed'))
      return
    }
    handleNodeRequest(receiver, req, { unavailableMessage: UNAVAILABLE_MESSAGE })
      .then((result) => {
        if (result === undefined) {
          req.destroy()
          return
        }
        // A setup mistake, not a bad delivery: say so once in the app's log, not per retry.
        if (result.error?.code === 'raw_body_unavailable' && !warned) {
          warned = true
          receiver.logger?.error(`@affiliate-webhooks/express: ${UNAVAILABLE_MESSAGE}`)
        }
        sendResult(res, result)
      })
      // Only writing to a socket that is already gone can fail here.
      .catch(() => req.destroy())
  }
}

import { handleNodeRequest, sendResult } from '@affiliate-webhooks/node'
import type { NextApiHandler } from 'next'
import type { NextWebhookOptions } from './app-router.js'
import { lazyReceiver } from './lazy-receiver.js'

const UNAVAILABLE_MESSAGE =
  "Next.js parsed this request's body before the webhook handler, so its exact bytes are gone and the signature cannot be checked. Add `export const config = { api: { bodyParser: false } }` to this file in pages/api."

/**
 * Pages Router: `export default affiliateWebhookPages(opts)` in `pages/api/...`,
 * next to `export const config = { api: { bodyParser: false } }` (a literal Next
 * reads at build time, so it must be written in the route file itself).
 */
export function affiliateWebhookPages(options: NextWebhookOptions): NextApiHandler {
  const receiverOf = lazyReceiver(options)
  let warned = false
  return async (req, res) => {
    const receiver = receiverOf()
    if (req.method !== 'POST') return sendResult(res, receiver.reject('method_not_allowed'))
    const result = await handleNodeRequest(receiver, req, {
      unavailableMessage: UNAVAILABLE_MESSAGE,
    })
    // A client that went away gets no answer.
    if (result === undefined) return void req.destroy()
    // A setup mistake, not a bad delivery: say so once in the app's log, not per retry.
    if (result.error?.code === 'raw_body_unavailable' && !warned) {
      warned = true
      receiver.logger?.error(`@affiliate-webhooks/next: ${UNAVAILABLE_MESSAGE}`)
    }
    sendResult(res, result)
  }
}

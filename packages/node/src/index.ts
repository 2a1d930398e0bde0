import type { IncomingMessage, ServerResponse } from 'node:http'
import {
  createReceiver,
  isWebhookError,
  type ReceiveResult,
  type Receiver,
  type ReceiverOptions,
} from '@affiliate-webhooks/core'
import { type ReadRawBodyOptions, readRawBody } from './raw-body.js'

export { type ReadRawBodyOptions, readRawBody } from './raw-body.js'

/** The receiver's options, plus `path` for mounting on a whole server. */
export interface NodeWebhookOptions extends ReceiverOptions {
  /** Answer only this path (query string ignored); other paths go to `next`, or 404. */
  path?: string
}

/** A node:http request listener that is also connect-style middleware. */
export type NodeWebhookHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  next?: (error?: unknown) => void,
) => void

/** Writes a core answer to a Node response. */
export function sendResult(res: ServerResponse, result: ReceiveResult): void {
  res.writeHead(result.status, result.headers).end(result.body)
}

/** Reads the exact bytes and runs the receiver; never rejects. */
export async function handleNodeRequest(
  receiver: Receiver,
  req: IncomingMessage,
  options?: ReadRawBodyOptions,
): Promise<ReceiveResult | undefined> {
  let rawBody: Uint8Array
  try {
    rawBody = await readRawBody(req, receiver.maxBodyBytes, options)
  } catch (error) {
    // A client that went away gets no answer.
    return isWebhookError(error) ? receiver.reject(error.code, error.message) : undefined
  }
  return receiver.receive({ headers: req.headers, rawBody })
}

/**
 * `http.createServer(affiliateWebhook({ secret, onConversion }))`, or mounted as
 * connect-style middleware. Answers POST only.
 */
export function affiliateWebhook(options: NodeWebhookOptions): NodeWebhookHandler {
  const { path, ...receiverOptions } = options
  const receiver = createReceiver(receiverOptions)
  return (req, res, next) => {
    if (path !== undefined && (req.url ?? '/').split('?', 1)[0] !== path) {
      if (next) next()
      else sendResult(res, receiver.reject('not_found'))
      return
    }
    if (req.method !== 'POST') {
      sendResult(res, receiver.reject('method_not_allowed'))
      return
    }
    handleNodeRequest(receiver, req)
      .then((result) => {
        if (result === undefined) req.destroy()
        else sendResult(res, result)
      })
      // Only writing to a socket that is already gone can fail here.
      .catch(() => req.destroy())
  }
}

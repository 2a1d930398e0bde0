import type { IncomingMessage, ServerResponse } from 'node:http'
import type { ReceiveResult, Receiver, ReceiverOptions } from '@affiliate-webhooks/core'
import {
  type AdapterOptions,
  createAdapter,
  type RawBodyAdapter,
} from '@affiliate-webhooks/core/internal'
import { readRawBody } from './raw-body.js'

export { type ReadRawBodyOptions, readRawBody } from './raw-body.js'

/** The receiver's options, plus `path` for mounting on a whole server. */
export interface NodeWebhookOptions<Tx = undefined> extends ReceiverOptions<Tx> {
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

/** How a Node framework names itself and tells its users to keep the bytes. */
export interface NodeAdapterInfo {
  /** The package, for its log lines: '@affiliate-webhooks/express'. */
  name: string
  /** Whose fix a raw_body_unavailable answer names (core's RAW_BODY_FIXES). Default 'node'. */
  adapter?: RawBodyAdapter | undefined
}

/** A Node adapter: its receiver, and the function that answers one request. */
export interface NodeAdapter {
  receiver(): Receiver
  /**
   * Reads, receives and writes the answer; drops the connection of a client that
   * went away. Settles once the answer is written; never rejects.
   */
  answer(req: IncomingMessage, res: ServerResponse): Promise<void>
}

/**
 * The shared Node adapter (node:http, Express, Next Pages, Koa): the core's
 * adapter factory fed with Node's request, `readRawBody`, and `sendResult`.
 */
export function createNodeAdapter<Tx = undefined>(
  options: AdapterOptions<unknown, Tx>,
  info: NodeAdapterInfo,
): NodeAdapter {
  const core = createAdapter<IncomingMessage, unknown, Tx>(options, {
    name: info.name,
    method: (req) => req.method,
    headers: (req) => req.headers,
    body: (req, limit, signal) => readRawBody(req, limit, { adapter: info.adapter, signal }),
  })
  return {
    receiver: core.receiver,
    answer: (req, res) =>
      core
        .handle(req)
        .then((result) => {
          // A client that went away gets no answer.
          if (result === undefined) req.destroy()
          else sendResult(res, result)
        })
        // Only writing to a socket that is already gone can fail here.
        .catch(() => void req.destroy()),
  }
}

/**
 * `http.createServer(affiliateWebhook({ secret, onConversion }))`, or mounted as
 * connect-style middleware. Answers POST only.
 */
export function affiliateWebhook<Tx = undefined>(
  options: NodeWebhookOptions<Tx>,
): NodeWebhookHandler {
  const { path, ...receiverOptions } = options
  const adapter = createNodeAdapter(receiverOptions, { name: '@affiliate-webhooks/node' })
  return (req, res, next) => {
    if (path !== undefined && (req.url ?? '/').split('?', 1)[0] !== path) {
      if (next) next()
      else sendResult(res, adapter.receiver().reject('not_found'))
      return
    }
    void adapter.answer(req, res)
  }
}

import type { IncomingMessage } from 'node:http'
import { BoundedBody, keptBody, tooLarge, WebhookError } from '@affiliate-webhooks/core'

/** Options of {@link readRawBody}. */
export interface ReadRawBodyOptions {
  /** The raw_body_unavailable message: how to keep the bytes in the caller's framework. */
  unavailableMessage?: string | undefined
}

const UNAVAILABLE_MESSAGE =
  'A body parser read this request before the webhook handler, so its exact bytes are gone. Mount the webhook route before the JSON parser, or keep the bytes with express.raw({ type: "application/json" }) or express.json({ verify: rawBodySaver }).'

/**
 * The exact bytes of a request body, read with a size limit enforced while
 * reading: past `limit` it stops and rejects with `payload_too_large` without
 * buffering the rest. When a body parser ran first it uses the bytes that parser
 * kept, and rejects with `raw_body_unavailable` when it kept none (never waits on
 * a stream that was already read, never re-serialises).
 */
export function readRawBody(
  req: IncomingMessage,
  limit: number,
  options: ReadRawBodyOptions = {},
): Promise<Uint8Array> {
  try {
    const kept = keptBody(req as { body?: unknown; rawBody?: unknown }, limit)
    if (kept !== undefined) return Promise.resolve(kept)
  } catch (error) {
    return Promise.reject(error)
  }
  // Judge by the stream, not by req.body: Express 4's json() sets req.body = {} on
  // requests it skips (another Content-Type), leaving their bytes unread and intact.
  if (req.readableDidRead || req.readableEnded) {
    return Promise.reject(
      new WebhookError('raw_body_unavailable', options.unavailableMessage ?? UNAVAILABLE_MESSAGE),
    )
  }
  const declared = Number(req.headers['content-length'])
  if (declared > limit) return Promise.reject(tooLarge(limit))
  // The client went away before we started (a slow middleware in front): no
  // 'end' or 'close' will come any more, so waiting would never settle.
  if (req.destroyed) return Promise.reject(new Error('request closed before its body was read'))

  return new Promise((resolve, reject) => {
    const body = new BoundedBody(limit)
    const cleanup = () => {
      req.off('data', onData)
      req.off('end', onEnd)
      req.off('error', onError)
      req.off('close', onClose)
    }
    const onData = (chunk: Buffer) => {
      if (body.add(chunk)) return
      cleanup()
      // Stop reading; the answer closes the connection instead of draining it.
      req.pause()
      reject(tooLarge(limit))
    }
    const onEnd = () => {
      cleanup()
      resolve(body.bytes())
    }
    const onError = (error: unknown) => {
      cleanup()
      reject(error)
    }
    // 'close' before 'end': the client disconnected mid-body.
    const onClose = () => {
      if (!req.readableEnded) onError(new Error('request closed before its body was read'))
    }
    req.on('data', onData)
    req.on('end', onEnd)
    req.on('error', onError)
    req.on('close', onClose)
  })
}

import type { IncomingMessage } from 'node:http'
import {
  BoundedBody,
  keptBody,
  type RawBodyAdapter,
  rawBodyUnavailable,
  tooLarge,
} from '@affiliate-webhooks/core/internal'

/** Options of {@link readRawBody}. */
export interface ReadRawBodyOptions {
  /** Whose fix a raw_body_unavailable answer names: 'express', 'koa'... Default 'node'. */
  adapter?: RawBodyAdapter | undefined
  /**
   * Aborts the read: the reader lets go of the stream and rejects with the
   * signal's reason. The adapters pass the body deadline's signal here.
   */
  signal?: AbortSignal | undefined
}

/**
 * The exact bytes of a request body, read with a size limit enforced while
 * reading: past `limit` it stops and rejects with `payload_too_large` without
 * buffering the rest. When a body parser ran first it uses the bytes that parser
 * kept, and rejects with `raw_body_unavailable` at once when it kept none, or
 * when another reader holds the stream: the stream's own state says so
 * (`readableDidRead`, `readableEnded`, flowing to someone else's listener). It
 * never waits on a stream someone else read, and never re-serialises. A slow
 * body is waited for until `signal` aborts.
 */
export function readRawBody(
  req: IncomingMessage,
  limit: number,
  options: ReadRawBodyOptions = {},
): Promise<Uint8Array> {
  const adapter = options.adapter ?? 'node'
  try {
    const kept = keptBody(req as { body?: unknown; rawBody?: unknown }, limit)
    if (kept !== undefined) return Promise.resolve(kept)
  } catch (error) {
    return Promise.reject(error)
  }
  // Judge by the stream, not by req.body: Express 4's json() sets req.body = {} on
  // requests it skips (another Content-Type), leaving their bytes unread and intact.
  if (req.readableDidRead || req.readableEnded) {
    return Promise.reject(rawBodyUnavailable(adapter, 'consumed'))
  }
  // Flowing before anyone here asked: another reader listens (or a pipe), and
  // would take the bytes this reader needs.
  if (req.readableFlowing === true || req.listenerCount('data') > 0) {
    return Promise.reject(rawBodyUnavailable(adapter, 'locked'))
  }
  const declared = Number(req.headers['content-length'])
  if (declared > limit) return Promise.reject(tooLarge(limit))
  // The client went away before we started (a slow middleware in front): no
  // 'end' or 'close' will come any more, so waiting would never settle.
  if (req.destroyed) return Promise.reject(new Error('request closed before its body was read'))
  return collect(req, limit, options.signal)
}

/** Reads the stream to its end, up to `limit`, until the client goes or `signal` aborts. */
function collect(req: IncomingMessage, limit: number, signal?: AbortSignal): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const body = new BoundedBody(limit)
    const cleanup = () => {
      signal?.removeEventListener('abort', onAbort)
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
    // The deadline passed: stop reading, keep nothing; the answer closes the connection.
    const onAbort = () => {
      cleanup()
      req.pause()
      reject(signal?.reason)
    }
    if (signal?.aborted) return onAbort()
    signal?.addEventListener('abort', onAbort)
    req.on('data', onData)
    req.on('end', onEnd)
    req.on('error', onError)
    req.on('close', onClose)
  })
}

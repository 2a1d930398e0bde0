import type { IncomingMessage } from 'node:http'
import {
  BODY_IDLE_MS,
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
  /** No byte for this long is answered raw_body_unavailable. Default 3 s (`BODY_IDLE_MS`). */
  idleMs?: number | undefined
}

/**
 * The exact bytes of a request body, read with a size limit enforced while
 * reading: past `limit` it stops and rejects with `payload_too_large` without
 * buffering the rest. When a body parser ran first it uses the bytes that parser
 * kept, and rejects with `raw_body_unavailable` when it kept none, or when the
 * stream gives nothing for `idleMs` (another reader holds it): it never waits on
 * a stream someone else read, and never re-serialises.
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
  const declared = Number(req.headers['content-length'])
  if (declared > limit) return Promise.reject(tooLarge(limit))
  // The client went away before we started (a slow middleware in front): no
  // 'end' or 'close' will come any more, so waiting would never settle.
  if (req.destroyed) return Promise.reject(new Error('request closed before its body was read'))

  return new Promise((resolve, reject) => {
    const body = new BoundedBody(limit)
    const idleMs = options.idleMs ?? BODY_IDLE_MS
    let idle: ReturnType<typeof setTimeout> | undefined
    const quiet = () => {
      cleanup()
      reject(rawBodyUnavailable(adapter, 'stalled'))
    }
    const waitForBytes = () => {
      if (idle !== undefined) clearTimeout(idle)
      idle = setTimeout(quiet, idleMs)
    }
    const cleanup = () => {
      if (idle !== undefined) clearTimeout(idle)
      req.off('data', onData)
      req.off('end', onEnd)
      req.off('error', onError)
      req.off('close', onClose)
    }
    const onData = (chunk: Buffer) => {
      if (body.add(chunk)) return waitForBytes()
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
    waitForBytes()
  })
}

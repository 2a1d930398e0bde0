/**
 * The one deadline for a request body, shared by every adapter: the whole body
 * must have arrived `bodyTimeoutMs` after the request started. Counted from the
 * start, not from the last byte, so a sender trickling one byte at a time gains
 * nothing. A body that is late is the client's fault: 408 `body_timeout`.
 */
import { WebhookError } from '../errors.js'
import { isPromiseLike } from '../store/event-store.js'

/**
 * Default body deadline, ms: well inside the service's 10 s timeout, with room
 * left for the handler. The service sends a small body in one go, so an honest
 * delivery takes milliseconds of it.
 */
export const BODY_TIMEOUT_MS = 5_000

/**
 * How far a reader got, for readers that can tell (a Web `Request`'s stream):
 * `counted` once the reader counts, `bytes` the bytes it has read.
 */
export interface BodyProgress {
  counted: boolean
  bytes: number
}

/**
 * The `body_timeout` error: how long the body was given. When a counting reader
 * saw no byte at all, the likelier cause is named: a stream that something
 * before this handler drained looks, to a fetch handler, like a silent client.
 */
export function bodyTimeout(ms: number, progress?: BodyProgress): WebhookError {
  const seconds = ms / 1000
  return new WebhookError(
    'body_timeout',
    progress?.counted && progress.bytes === 0
      ? `No byte of the body arrived in ${seconds} s. Likely something before this handler read it (a middleware's request.json(); Nuxt/Nitro: toWebRequest(event).json(), where the h3 adapter answers 500 at once); else the client stalled.`
      : `The body had not fully arrived ${seconds} s after the request started (a stall, a trickle, or a Content-Length larger than what was sent).`,
  )
}

/**
 * What a runtime's body reader gets: the limit, and a signal that aborts when
 * the deadline passes, so the reader lets go of the stream (its listeners, its
 * lock) instead of holding it for a body that will not come.
 */
export type BodyReadIO = (
  limit: number,
  signal: AbortSignal,
  progress: BodyProgress,
) => Promise<Uint8Array> | Uint8Array

/**
 * Reads a body with the deadline: the reader's bytes, or `body_timeout` once
 * `ms` have passed since `startedAt`. A reader that answers at once (bytes a
 * parser kept, a Lambda event) costs no timer.
 */
export function readBodyWithin(
  read: BodyReadIO,
  limit: number,
  ms: number,
  startedAt: number,
): Promise<Uint8Array> | Uint8Array {
  const controller = new AbortController()
  const progress: BodyProgress = { counted: false, bytes: 0 }
  const bytes = read(limit, controller.signal, progress)
  if (!isPromiseLike(bytes)) return bytes
  return new Promise<Uint8Array>((resolve, reject) => {
    const timer = setTimeout(
      () => {
        // The answer first; then the reader lets go of the stream.
        reject(bodyTimeout(ms, progress))
        controller.abort()
      },
      Math.max(0, ms - (Date.now() - startedAt)),
    )
    Promise.resolve(bytes).then(
      (value) => {
        clearTimeout(timer)
        resolve(value)
      },
      (error: unknown) => {
        clearTimeout(timer)
        reject(error)
      },
    )
  })
}

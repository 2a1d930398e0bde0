/**
 * The exact bytes of a Web `Request`'s body, for the adapters that get one
 * (`@affiliate-webhooks/web`, and `@affiliate-webhooks/h3` on h3 2, whose
 * `event.req` is a `Request`): bounded by the limit and by the request's body
 * deadline, and a body already read or held by another reader is
 * `raw_body_unavailable` naming that adapter, known from the runtime's own state.
 */
import { BoundedBody, tooLarge } from './adapter.js'
import type { BodyProgress } from './body-deadline.js'
import { type RawBodyAdapter, rawBodyUnavailable } from './raw-body-fixes.js'

/**
 * At most `limit` bytes of `request`'s body: a declared length past the limit is
 * refused before reading, a streamed body is read until it passes the limit and
 * no further. A body already read (`bodyUsed`) or held by another reader (a
 * locked stream) is `raw_body_unavailable` for `adapter` at once, never a wait; a
 * slow one is read until `signal` aborts, when the reader lets go of the stream
 * and rejects with the signal's reason. `progress` counts the bytes read, so a
 * deadline with none read can name the likelier cause.
 */
export async function readWebBody(
  request: Request,
  limit: number,
  adapter: RawBodyAdapter,
  signal?: AbortSignal,
  progress?: BodyProgress,
): Promise<Uint8Array> {
  if (request.bodyUsed) throw rawBodyUnavailable(adapter, 'consumed')
  const declared = request.headers.get('content-length')
  // A length that is not a number is not trusted to bound the read: not <= limit.
  if (declared !== null && !(Number(declared) <= limit)) throw tooLarge(limit)
  if (request.body === null) return new Uint8Array(0)
  if (request.body.locked) throw rawBodyUnavailable(adapter, 'locked')
  const reader = request.body.getReader()
  if (progress) progress.counted = true
  // Releasing the lock ends the pending read; the stream stays, unread, and the
  // answer (Connection: close) ends the connection.
  const letGo = () => {
    try {
      reader.releaseLock()
    } catch {
      // A runtime that refuses to release a lock with a read pending: cancel instead.
      reader.cancel().catch(() => {})
    }
  }
  signal?.addEventListener('abort', letGo, { once: true })
  try {
    const body = new BoundedBody(limit)
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      if (progress) progress.bytes += read.value.byteLength
      if (!body.add(read.value)) {
        // Not cancel(): on Node, Next streams the IncomingMessage into the Request, and
        // cancelling destroys the socket before the 413 can reach the service.
        reader.releaseLock()
        throw tooLarge(limit)
      }
    }
    return body.bytes()
  } catch (error) {
    throw signal?.aborted ? signal.reason : error
  } finally {
    signal?.removeEventListener('abort', letGo)
  }
}

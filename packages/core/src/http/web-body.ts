/**
 * The exact bytes of a Web `Request`'s body, for the adapters that get one
 * (`@affiliate-webhooks/web`, and `@affiliate-webhooks/h3` on h3 2, whose
 * `event.req` is a `Request`): bounded by the limit, and a body already read,
 * held by another reader or silent is `raw_body_unavailable` naming that adapter.
 */
import { BoundedBody, tooLarge } from './adapter.js'
import { BODY_IDLE_MS, type RawBodyAdapter, rawBodyUnavailable } from './raw-body-fixes.js'

/**
 * At most `limit` bytes of `request`'s body: a declared length past the limit is
 * refused before reading, a streamed body is read until it passes the limit and
 * no further. A body already read, held by another reader, or silent for
 * `idleMs` is `raw_body_unavailable` for `adapter` at once, never a wait.
 */
export async function readWebBody(
  request: Request,
  limit: number,
  adapter: RawBodyAdapter,
  idleMs: number = BODY_IDLE_MS,
): Promise<Uint8Array> {
  if (request.bodyUsed) throw rawBodyUnavailable(adapter, 'consumed')
  const declared = request.headers.get('content-length')
  // A length that is not a number is not trusted to bound the read: not <= limit.
  if (declared !== null && !(Number(declared) <= limit)) throw tooLarge(limit)
  if (request.body === null) return new Uint8Array(0)
  if (request.body.locked) throw rawBodyUnavailable(adapter, 'locked')
  const reader = request.body.getReader()
  const body = new BoundedBody(limit)
  for (let read = await nextChunk(reader, adapter, idleMs); !read.done; ) {
    if (!body.add(read.value)) {
      // Not cancel(): on Node, Next streams the IncomingMessage into the Request, and
      // cancelling destroys the socket before the 413 can reach the service.
      reader.releaseLock()
      throw tooLarge(limit)
    }
    read = await nextChunk(reader, adapter, idleMs)
  }
  return body.bytes()
}

/** The next chunk, or raw_body_unavailable when none comes within `idleMs`. */
function nextChunk(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  adapter: RawBodyAdapter,
  idleMs: number,
): Promise<ReadableStreamReadResult<Uint8Array>> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const silence = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // First the answer, then let go of the source (which ends the pending read).
      reject(rawBodyUnavailable(adapter, 'stalled'))
      reader.cancel().catch(() => {})
    }, idleMs)
  })
  return Promise.race([reader.read(), silence]).finally(() => clearTimeout(timer))
}

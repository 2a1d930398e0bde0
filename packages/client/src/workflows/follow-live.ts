import type { Client } from '../client.js'
import { delay } from '../http/delay.js'
import { ServiceError } from '../http/errors.js'
import type { StreamMessage } from '../http/event-stream.js'
import type { Delivery } from '../types.js'
import { attemptSeen, type FollowEvent, type FollowNotice } from './follow-events.js'

/** First wait before opening a dropped stream again (the emulator's `retry:`); doubles to the max. */
export const RECONNECT_MS = 1_000
/** Longest wait between two tries to open the stream again. */
export const MAX_RECONNECT_MS = 30_000

const now = () => new Date().toISOString()

/** A message's JSON data, or the error a stream that sends anything else deserves. */
function dataOf(message: StreamMessage): Record<string, unknown> {
  try {
    const data: unknown = JSON.parse(message.data)
    if (typeof data === 'object' && data !== null) return data as Record<string, unknown>
  } catch {}
  throw new ServiceError(
    200,
    'invalid_response',
    `the emulator's event stream sent a ${message.event} message that is not a JSON object`,
  )
}

/** True for a failure after which opening the stream again may work: a drop, a 5xx. */
const passing = (error: unknown) =>
  error instanceof ServiceError && (error.code === 'network_error' || error.status >= 500)

/** What is known between two connections: the endpoint's status, the last event id. */
interface Seen {
  status: string | undefined
  lastEventId: string | undefined
}

/** The follow's events for one message of the stream. */
function* eventsOf(
  endpointId: string,
  message: StreamMessage,
  seen: Seen,
): Generator<FollowEvent | FollowNotice> {
  const data = dataOf(message)
  if (message.event === 'attempt') {
    yield attemptSeen(endpointId, data as unknown as Delivery)
  } else if (message.event === 'ready' || message.event === 'endpoint') {
    const status = String(data.status)
    const first = seen.status === undefined
    // After a reconnect, `ready` says whether it changed while the stream was down.
    if (first) yield { type: 'live', at: now(), endpointId }
    else if (status !== seen.status) yield { type: 'endpoint', at: now(), endpointId, status }
    seen.status = status
  } else if (message.event === 'deleted') {
    throw new ServiceError(404, 'webhook_not_found', `endpoint ${endpointId} was deleted`)
  }
}

/**
 * A live tail of an endpoint on the emulator, from its event stream
 * (`GET /emulator/webhooks/{id}/events`, not counted against the rate limit or
 * the quota): a `live` notice once listening, then each attempt and each
 * change of the endpoint's status as the emulator sends it. A dropped stream is
 * opened again (after 1 s, doubling to 30 s, a `reconnect` notice each time),
 * asking for the attempts it missed; so is one silent for `idleMs` (45 s: three
 * keepalives missed); a refusal (401, 403, 404) is thrown. Ends
 * when `signal` aborts, rejecting with its reason.
 */
export async function* followLive(
  api: Client,
  endpointId: string,
  options: { signal?: AbortSignal | undefined; idleMs?: number | undefined } = {},
): AsyncGenerator<FollowEvent | FollowNotice> {
  const { signal, idleMs } = options
  const seen: Seen = { status: undefined, lastEventId: undefined }
  let waitMs = RECONNECT_MS
  for (;;) {
    let reason = 'the stream ended'
    try {
      const stream = api.emulator.events(endpointId, {
        ...(signal ? { signal } : {}),
        lastEventId: seen.lastEventId,
        idleMs,
      })
      for await (const message of stream) {
        if (message.id !== undefined) seen.lastEventId = message.id
        if (message.event === 'ready') waitMs = RECONNECT_MS
        yield* eventsOf(endpointId, message, seen)
      }
    } catch (error) {
      if (signal?.aborted) throw signal.reason
      if (!passing(error)) throw error
      reason = (error as Error).message
    }
    yield { type: 'reconnect', at: now(), delayMs: waitMs, reason }
    await delay(waitMs, signal)
    waitMs = Math.min(MAX_RECONNECT_MS, waitMs * 2)
  }
}

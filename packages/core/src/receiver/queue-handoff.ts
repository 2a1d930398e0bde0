import { WebhookError } from '../errors.js'
import type { AnyWebhookEvent } from '../events/event-types.js'
import { parseEvent } from '../events/parse-event.js'
import { type EventStore, isPromiseLike, type PeekResult } from '../store/event-store.js'

/**
 * Where a receiver with the `queue` option hands a verified event, instead of
 * running a handler: a durable queue whose workers run the handlers.
 * `@affiliate-webhooks/bullmq`'s `bullmqHandoff()` is one.
 */
export interface QueueHandoff {
  /**
   * Queues one verified event, at most once per event id. Resolves only once the
   * queue has durably accepted it (the receiver then answers 200 `queued`);
   * rejects when it could not (the receiver answers 503 so the service retries).
   */
  enqueue(delivery: QueuedDelivery): Promise<void>
}

/** One verified delivery as the receiver hands it to a {@link QueueHandoff}. */
export interface QueuedDelivery {
  event: AnyWebhookEvent
  /** The conversion id of conversion events; undefined for the rest. */
  conversionId: number | undefined
  /** The event's place in its conversion's order (see `BeginInput.order`). */
  order: number
  /** `Service-Delivery-Attempt` of the delivery that queued it, or null. */
  attempt: number | null
  /** The signature's `t`, seconds since the epoch. */
  signedAt: number
}

/**
 * What a queue job carries: the verified event and the delivery facts a handler
 * sees. Plain JSON, so any queue can store it.
 */
export interface QueuedJobData {
  event: AnyWebhookEvent
  attempt: number | null
  signedAt: number
}

/** The job a {@link QueuedDelivery} becomes. */
export const toQueuedJobData = ({ event, attempt, signedAt }: QueuedDelivery): QueuedJobData => ({
  event,
  attempt,
  signedAt,
})

/**
 * Reads a job back into a delivery, checking it as strictly as the receiver
 * checked the body: a job written into the queue by something else fails here
 * with `invalid_payload` (or `malformed_json`) instead of reaching a handler.
 */
export function readQueuedJob(data: unknown): QueuedDelivery {
  if (typeof data !== 'object' || data === null) {
    throw new WebhookError('invalid_payload', 'The job data is not an object.')
  }
  const { event, attempt, signedAt } = data as Partial<QueuedJobData>
  if (attempt !== null && attempt !== undefined && !Number.isSafeInteger(attempt)) {
    throw new WebhookError('invalid_payload', 'The job data has a non-integer attempt.')
  }
  if (!Number.isSafeInteger(signedAt)) {
    throw new WebhookError('invalid_payload', 'The job data has no integer signedAt.')
  }
  // The event went through JSON on its way into the queue; the same parser that
  // checked the signed body checks it again, so both sides agree on its shape.
  const parsed = parseEvent(JSON.stringify(event ?? null))
  return { ...parsed, attempt: attempt ?? null, signedAt: signedAt as number }
}

/** What the receiver answers a queued delivery, or the error to answer instead. */
export type HandOffResult =
  | { outcome: 'queued' | 'duplicate' | 'stale' }
  | { error: WebhookError; outcome?: undefined }

const settle = async (
  store: EventStore | undefined,
  delivery: QueuedDelivery,
): Promise<PeekResult | WebhookError> => {
  if (store?.peek === undefined) return 'unsettled'
  try {
    const peeked = store.peek({
      eventId: delivery.event.id,
      conversionId: delivery.conversionId,
      order: delivery.order,
      createdAt: delivery.order,
    })
    return isPromiseLike(peeked) ? await peeked : peeked
  } catch (cause) {
    return new WebhookError('store_unavailable', undefined, { cause })
  }
}

/**
 * The receiver's queued step: skip what the store says is settled, else queue.
 * Never throws; a 2xx outcome only once the store or the queue said so.
 */
export async function handOff(
  queue: QueueHandoff,
  store: EventStore | undefined,
  delivery: QueuedDelivery,
): Promise<HandOffResult> {
  const peeked = await settle(store, delivery)
  if (peeked instanceof WebhookError) return { error: peeked }
  if (peeked !== 'unsettled') return { outcome: peeked }
  try {
    await queue.enqueue(delivery)
    return { outcome: 'queued' }
  } catch (cause) {
    return {
      error: new WebhookError('queue_unavailable', undefined, { cause }),
    }
  }
}

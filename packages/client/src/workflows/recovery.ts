import { readReceiverAnswer } from '@affiliate-webhooks/core/internal'
import type { Client } from '../client.js'
import type { Delivery } from '../types.js'

/** What a bulk replay did. */
export interface ReplaySummary {
  replayed: number
  /** A retry met 409: the replay had started on a try whose answer was lost. */
  alreadyReplaying: number
  /** Refused or failed, with why. */
  failed: { deliveryId: string; error: string }[]
  /** Stopped (Ctrl-C) before the end. */
  interrupted: boolean
}

/**
 * Replays deliveries one after another. The client paces the calls under the
 * rate limit, so hundreds of replays wait for the window instead of meeting 429.
 */
export async function replayAll(
  api: Client,
  endpointId: string,
  deliveries: readonly Delivery[],
  options: { signal?: AbortSignal; onProgress?: (done: number, total: number) => void } = {},
): Promise<ReplaySummary> {
  const summary: ReplaySummary = {
    replayed: 0,
    alreadyReplaying: 0,
    failed: [],
    interrupted: false,
  }
  for (const [index, delivery] of deliveries.entries()) {
    if (options.signal?.aborted) {
      summary.interrupted = true
      break
    }
    try {
      const result = await api.webhooks.replay(
        endpointId,
        delivery.id,
        options.signal ? { signal: options.signal } : {},
      )
      if (result.outcome === 'accepted') summary.replayed++
      else summary.alreadyReplaying++
    } catch (error) {
      if (options.signal?.aborted) {
        summary.interrupted = true
        break
      }
      summary.failed.push({ deliveryId: delivery.id, error: (error as Error).message })
    }
    options.onProgress?.(index + 1, deliveries.length)
  }
  return summary
}

/** A failed delivery `recover` did not replay, and why. */
export interface LeftDelivery {
  /** The failed delivery left. */
  deliveryId: string
  /** Its event, when the service names it. */
  eventId: string | null
  /**
   * `acknowledged`: the receiver answered its event with a 2xx (see
   * {@link acknowledgementOf}), so a replay would only be answered `duplicate`;
   * `before_since`: created before the `since` asked for.
   */
  reason: 'acknowledged' | 'before_since'
  /** For `acknowledged`: how the receiver acknowledged it. */
  acknowledgement?: Acknowledgement
  /** When the delivery was created (the service's clock), when it says. */
  createdAt: string | null
}

/** What `recover` did, and the window it cannot repair. */
export interface RecoveryReport {
  endpointId: string
  /** When the service disabled the endpoint, if it was disabled. */
  disabledAt: string | null
  /** When this run turned it back on; null when it was already active. */
  reenabledAt: string | null
  /** Only failed deliveries created since this time were replayed; null: every one. */
  since: string | null
  /** Every failed delivery of the endpoint. */
  failedFound: number
  /** Those whose event the receiver never acknowledged (and created since `since`): the ones replayed. */
  toReplay: number
  /** The failed deliveries not replayed, each with why. */
  left: LeftDelivery[]
  replay: ReplaySummary
  /** Deliveries the service still retries: not replayable until they succeed or fail for good. */
  stillQueued: StillQueued
}

/** Deliveries still pending or retrying, and when their next attempts are due. */
export interface StillQueued {
  pending: number
  retrying: number
  /** The earliest next attempt among them (ISO, the service's clock), when the service says. */
  firstNextAttemptAt: string | null
  /** The latest next attempt among them. */
  lastNextAttemptAt: string | null
}

/**
 * The deliveries the service still has queued: the spec refuses to replay a
 * pending or retrying one (409 `delivery_not_replayable`), the service tries it
 * again on its schedule. Next attempt times come from `nextAttemptAt` where the
 * service gives it (the spec does not name it; the emulator does).
 */
export function stillQueued(deliveries: readonly Delivery[]): StillQueued {
  const queued = deliveries.filter((d) => d.status === 'pending' || d.status === 'retrying')
  const times = queued
    .map((d) => (typeof d.nextAttemptAt === 'string' ? Date.parse(d.nextAttemptAt) : Number.NaN))
    .filter(Number.isFinite)
  const iso = (ms: number) => (Number.isFinite(ms) ? new Date(ms).toISOString() : null)
  return {
    pending: queued.filter((d) => d.status === 'pending').length,
    retrying: queued.filter((d) => d.status === 'retrying').length,
    firstNextAttemptAt: iso(Math.min(...times)),
    lastNextAttemptAt: iso(Math.max(...times)),
  }
}

/**
 * How the receiver acknowledged a delivery's event: `answer`, this delivery's last
 * recorded answer is a 2xx (with the library's `outcome` when this library
 * answered) although the delivery is failed: the 2xx came in an earlier round,
 * and the replay after it was marked failed without an answer (it came due while
 * the endpoint was disabled); `delivery`, another delivery of the same event
 * succeeded.
 */
export type Acknowledgement =
  | { by: 'answer'; responseStatus: number; outcome: string | null }
  | { by: 'delivery'; deliveryId: string }

/**
 * Whether the receiver ever acknowledged `delivery`'s event, as far as the
 * service's delivery list tells: null when nothing says so (a failed delivery
 * whose last answer is not a 2xx, and no other delivery of its event succeeded).
 */
export function acknowledgementOf(
  delivery: Delivery,
  all: readonly Delivery[] = [],
): Acknowledgement | null {
  const status = delivery.responseStatus
  if (typeof status === 'number' && status >= 200 && status < 300) {
    return {
      by: 'answer',
      responseStatus: status,
      outcome: readReceiverAnswer(delivery.responseBody).outcome ?? null,
    }
  }
  if (!delivery.eventId) return null
  const other = all.find(
    (d) => d.id !== delivery.id && d.eventId === delivery.eventId && d.status === 'succeeded',
  )
  return other ? { by: 'delivery', deliveryId: other.id } : null
}

/**
 * Re-enables a disabled endpoint, then replays every failed delivery whose event
 * the receiver never acknowledged (only those created since `since`, when given),
 * and names each failed delivery it left, with why. Re-enabling comes first so
 * the replays are delivered at all.
 */
export async function recoverEndpoint(
  api: Client,
  endpointId: string,
  options: {
    since?: Date | undefined
    signal?: AbortSignal
    onProgress?: (done: number, total: number) => void
  } = {},
): Promise<RecoveryReport> {
  const endpoint = await api.webhooks.get(
    endpointId,
    options.signal ? { signal: options.signal } : {},
  )
  let reenabledAt: string | null = null
  if (endpoint.status === 'disabled') {
    await api.webhooks.update(endpointId, { status: 'active' })
    reenabledAt = new Date().toISOString()
  }
  const all: Delivery[] = []
  for await (const delivery of api.webhooks.deliveries(
    endpointId,
    options.signal ? { signal: options.signal } : {},
  )) {
    all.push(delivery)
  }
  const { since } = options
  const failed = all.filter((d) => d.status === 'failed')
  const toReplay: Delivery[] = []
  const left: LeftDelivery[] = []
  // Oldest first: the receiver meets the events in the order they occurred.
  for (const delivery of [...failed].reverse()) {
    const about = { deliveryId: delivery.id, eventId: delivery.eventId ?? null }
    const createdAt = delivery.createdAt ?? null
    const acknowledgement = acknowledgementOf(delivery, all)
    if (acknowledgement) {
      left.push({ ...about, reason: 'acknowledged', acknowledgement, createdAt })
    } else if (since && createdAt && Date.parse(createdAt) < since.getTime()) {
      left.push({ ...about, reason: 'before_since', createdAt })
    } else {
      toReplay.push(delivery)
    }
  }
  const replay = await replayAll(api, endpointId, toReplay, options)
  return {
    endpointId,
    disabledAt: endpoint.disabledAt,
    reenabledAt,
    since: since?.toISOString() ?? null,
    failedFound: failed.length,
    toReplay: toReplay.length,
    left,
    replay,
    stillQueued: stillQueued(all),
  }
}

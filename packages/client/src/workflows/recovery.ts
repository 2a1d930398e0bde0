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

/** What `recover` did, and the window it cannot repair. */
export interface RecoveryReport {
  endpointId: string
  /** When the service disabled the endpoint, if it was disabled. */
  disabledAt: string | null
  /** When this run turned it back on; null when it was already active. */
  reenabledAt: string | null
  /** Failed deliveries created since this time were replayed. */
  since: string | null
  failedFound: number
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
 * The start of the failure streak: the oldest failed delivery newer than the
 * newest successful one (deliveries newest first). Null when none failed.
 */
export function streakStart(deliveries: readonly Delivery[]): Date | null {
  let start: Date | null = null
  for (const delivery of deliveries) {
    if (delivery.status === 'succeeded') break
    if (delivery.status === 'failed' && delivery.createdAt) start = new Date(delivery.createdAt)
  }
  return start
}

/**
 * Re-enables a disabled endpoint, then replays every failed delivery since
 * `since` (default: the start of the failure streak). Re-enabling comes first so
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
  const since = options.since ?? streakStart(all)
  const failed = all.filter(
    (d) =>
      d.status === 'failed' &&
      (since === null || !d.createdAt || Date.parse(d.createdAt) >= since.getTime()),
  )
  const replay = await replayAll(api, endpointId, failed, options)
  return {
    endpointId,
    disabledAt: endpoint.disabledAt,
    reenabledAt,
    since: since?.toISOString() ?? null,
    failedFound: failed.length,
    replay,
    stillQueued: stillQueued(all),
  }
}

import type { Client, Delivery } from '@affiliate-webhooks/client'
import { type ReplaySummary, replayAll } from './replay-all.js'

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
  }
}

export function formatRecovery(report: RecoveryReport): string {
  const lines: string[] = []
  if (report.reenabledAt) {
    lines.push(
      `${report.endpointId} re-enabled at ${report.reenabledAt} (disabled since ${report.disabledAt ?? 'unknown'})`,
    )
  } else {
    lines.push(`${report.endpointId} was active; nothing to re-enable`)
  }
  lines.push(
    `replayed ${report.replay.replayed} of ${report.failedFound} failed deliver${report.failedFound === 1 ? 'y' : 'ies'}${report.since ? ` since ${report.since}` : ''}${report.replay.alreadyReplaying ? ` (${report.replay.alreadyReplaying} already replaying)` : ''}${report.replay.failed.length ? `, ${report.replay.failed.length} refused` : ''}`,
  )
  if (report.reenabledAt) {
    lines.push(
      '',
      // One clock: the start is the service's; the end is the re-enabling itself,
      // whose service time no answer tells (this machine's clock may run apart).
      `Not recoverable by replay: from ${report.disabledAt ?? 'the moment it was disabled'} (the service's clock) until this command re-enabled it,`,
      'the service queued nothing for this endpoint. Conversions created or changed in that',
      "window were never sent and never will be: reconcile them from the service's conversion",
      'reports for that window.',
    )
  }
  return lines.join('\n')
}

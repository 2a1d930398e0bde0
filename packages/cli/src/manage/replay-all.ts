import type { Client, Delivery } from '@affiliate-webhooks/client'

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

export function formatReplaySummary(summary: ReplaySummary, total: number): string {
  const lines = [
    `replayed ${summary.replayed} of ${total}${summary.alreadyReplaying ? `, ${summary.alreadyReplaying} already replaying` : ''}${summary.failed.length ? `, ${summary.failed.length} refused` : ''}${summary.interrupted ? ' (interrupted)' : ''}`,
  ]
  for (const { deliveryId, error } of summary.failed.slice(0, 10))
    lines.push(`  ${deliveryId}: ${error}`)
  if (summary.failed.length > 10) lines.push(`  ... and ${summary.failed.length - 10} more`)
  return lines.join('\n')
}

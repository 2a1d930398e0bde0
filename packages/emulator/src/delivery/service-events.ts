import { newId } from '../shared/ids.js'
import type { ConversionRecord } from '../shared/records.js'

/** An event as the service delivers it: the body every attempt of its deliveries carries. */
export interface ServiceEvent {
  id: string
  type: string
  /** The real time it occurred (ISO): see {@link signableStamp}. */
  createdAt: string
  data: unknown
}

let lastStamp = 0

/**
 * The createdAt of an event occurring now. Each attempt is signed with the real
 * time (receivers check `t` against their own clocks), and a receiver refuses an
 * event created after its signature (plus the tolerance): the service signs after
 * it creates. So an event is stamped with the real time it occurred, not the
 * service time, which `advance` and the time scale move ahead; each stamp a
 * millisecond after the one before, so events keep the order they occurred in.
 */
export function signableStamp(): number {
  lastStamp = Math.max(Date.now(), lastStamp + 1)
  return lastStamp
}

/** `webhook.test` for one endpoint, occurred at `now` (real time, epoch ms). */
export function testEvent(webhookId: string, now: number): ServiceEvent {
  return {
    id: newId.event(),
    type: 'webhook.test',
    createdAt: new Date(now).toISOString(),
    data: { webhookId },
  }
}

/**
 * The event a conversion's report sets off: created for an id never seen,
 * updated for a new status, none (undefined) for the same status.
 */
export function conversionEventType(
  known: ConversionRecord | undefined,
  conversion: ConversionRecord,
): 'conversion.created' | 'conversion.updated' | undefined {
  if (!known) return 'conversion.created'
  return known.status !== conversion.status ? 'conversion.updated' : undefined
}

/** A conversion event of `type`, occurred at `now` (real time, epoch ms). */
export function conversionEvent(
  type: string,
  conversion: ConversionRecord,
  now: number,
): ServiceEvent {
  return {
    id: newId.event(),
    type,
    createdAt: new Date(now).toISOString(),
    data: { conversion },
  }
}

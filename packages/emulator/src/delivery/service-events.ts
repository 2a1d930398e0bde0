import { newId } from '../shared/ids.js'
import type { ConversionRecord } from '../shared/records.js'

/** An event as the service delivers it: the body every attempt of its deliveries carries. */
export interface ServiceEvent {
  id: string
  type: string
  /** Service time it occurred (ISO). */
  createdAt: string
  data: unknown
}

/** `webhook.test` for one endpoint, occurred at `now` (service time, epoch ms). */
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

/** A conversion event of `type`, occurred at `now` (service time, epoch ms). */
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

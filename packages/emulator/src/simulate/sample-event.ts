/**
 * The sample event `affiliate-webhooks send` and `trigger` build when given no
 * body, and a random conversion id for it.
 */
import { randomInt } from 'node:crypto'
import { EVENT_TYPES } from '@affiliate-webhooks/core'
import { buildConversionEvent, buildTestEvent } from '@affiliate-webhooks/core/testing'

/** The event types {@link sampleEventBody} builds. */
export const SAMPLE_EVENT_TYPES = EVENT_TYPES

/**
 * A conversion id for an event made up here (send, trigger, simulate): six to
 * nine digits, so it reads as an id and stays a 32-bit integer with room for a
 * run of consecutive ids after it.
 */
export function randomConversionId(): number {
  return randomInt(100_000, 1_000_000_000)
}

/** What {@link sampleEventBody} builds; every field may be left out. */
export interface SampleEventOptions {
  /** Default conversion.created when `status` is absent or pending, else conversion.updated. */
  type?: (typeof SAMPLE_EVENT_TYPES)[number] | undefined
  /** The conversion's status. Default pending for a created event, approved for an update. */
  status?: string | undefined
  /** The conversion's id. Default a random one. */
  conversionId?: number | undefined
  /** The event's createdAt, ISO 8601. Default now. */
  createdAt?: string | undefined
}

/**
 * The JSON body of an event as the service would send it, with the defaults
 * `send` uses. Throws a TypeError when a webhook.test is given a status or a
 * conversion id (it has no conversion).
 */
export function sampleEventBody(options: SampleEventOptions = {}): string {
  const { type, status, conversionId, createdAt } = options
  const at = createdAt ? { createdAt } : {}
  if (type === 'webhook.test') {
    if (status !== undefined || conversionId !== undefined) {
      throw new TypeError('status and conversionId apply to conversion events, not webhook.test')
    }
    return JSON.stringify(buildTestEvent(at))
  }
  const resolved =
    type ??
    (status === undefined || status === 'pending' ? 'conversion.created' : 'conversion.updated')
  const conversion = {
    id: conversionId ?? randomConversionId(),
    status: status ?? (resolved === 'conversion.created' ? 'pending' : 'approved'),
  }
  return JSON.stringify(buildConversionEvent({ type: resolved, ...at, conversion }))
}

import { WebhookError } from '../errors.js'
import type { AnyWebhookEvent, Conversion } from './event-types.js'
import { isoTimeMicros } from './iso-time.js'

export interface ParsedEvent {
  event: AnyWebhookEvent
  /**
   * Where the event stands in its conversion's order: createdAt in microseconds,
   * times two, plus one for conversion.updated. A created and an updated event
   * stamped in the same microsecond then still order created first.
   */
  order: number
  /** The conversion id of conversion.created/updated; undefined for the rest. */
  conversionId: number | undefined
}

function invalid(detail: string): WebhookError {
  return new WebhookError('invalid_payload', `The event does not match the spec: ${detail}`)
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const nullableInteger = (value: unknown) =>
  value === null || value === undefined || Number.isSafeInteger(value)
const nullableString = (value: unknown) =>
  value === null || value === undefined || typeof value === 'string'

// Written out field by field: a loop over field names makes every access a
// keyed lookup, which cost more than the JSON.parse before it.
function checkConversion(value: unknown): asserts value is Conversion {
  if (!isObject(value)) throw invalid('data.conversion must be an object')
  const c = value as Partial<Record<keyof Conversion, unknown>>
  if (!Number.isSafeInteger(c.id)) throw invalid('data.conversion.id must be an integer')
  if (typeof c.status !== 'string' || c.status === '') {
    throw invalid('data.conversion.status must be a non-empty string')
  }
  if (!nullableInteger(c.programId))
    throw invalid('data.conversion.programId must be an integer or null')
  if (!nullableInteger(c.channelId))
    throw invalid('data.conversion.channelId must be an integer or null')
  if (!nullableString(c.saleAmount))
    throw invalid('data.conversion.saleAmount must be a string or null')
  if (!nullableString(c.commission))
    throw invalid('data.conversion.commission must be a string or null')
  if (!nullableString(c.currency))
    throw invalid('data.conversion.currency must be a string or null')
  // occurredAt is the network's value, passed through as the service got it: refusing
  // a whole conversion over its format would lose the conversion after 8 attempts.
  if (!nullableString(c.occurredAt)) {
    throw invalid('data.conversion.occurredAt must be a string or null')
  }
  // The spec marks these nullable; absent reads as null so the types hold.
  if (c.programId === undefined) c.programId = null
  if (c.channelId === undefined) c.channelId = null
  if (c.saleAmount === undefined) c.saleAmount = null
  if (c.commission === undefined) c.commission = null
  if (c.currency === undefined) c.currency = null
  if (c.occurredAt === undefined) c.occurredAt = null
}

/**
 * Parses a verified body and checks it against the spec's envelope and conversion
 * tables. Throws `malformed_json` or `invalid_payload`. Only ever called after the
 * signature matched, so unauthenticated input never reaches JSON.parse.
 */
export function parseEvent(text: string): ParsedEvent {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (cause) {
    throw new WebhookError('malformed_json', 'The body is not valid JSON.', { cause })
  }
  if (!isObject(value)) throw invalid('the body must be a JSON object')
  const { id, type, data } = value
  if (typeof id !== 'string' || !id.startsWith('evt_') || id.length === 4) {
    throw invalid('id must be a string starting with evt_')
  }
  if (typeof type !== 'string' || type === '') throw invalid('type must be a non-empty string')
  const createdAt = isoTimeMicros(value.createdAt)
  if (Number.isNaN(createdAt)) throw invalid('createdAt must be an ISO 8601 time')
  let conversionId: number | undefined
  // Only the types the spec defines are ordered; a future type is de-duplicated
  // alone, so a shape we cannot know yet is never refused.
  if (type === 'conversion.created' || type === 'conversion.updated') {
    if (!isObject(data)) throw invalid('data must be an object')
    checkConversion(data.conversion)
    conversionId = data.conversion.id
  } else if (data === undefined || data === null) {
    // The spec does not show webhook.test's data; a test event without it is still one.
    value.data = {}
  } else if (!isObject(data)) {
    throw invalid('data must be an object')
  }
  const order = createdAt * 2 + (type === 'conversion.updated' ? 1 : 0)
  return { event: value as unknown as AnyWebhookEvent, order, conversionId }
}

import { WebhookError } from './errors.js'
import type { AnyWebhookEvent, Conversion } from './types.js'

export interface ParsedEvent {
  event: AnyWebhookEvent
  /** createdAt in milliseconds since the epoch; orders events of one conversion. */
  createdAtMs: number
  /** The conversion id of conversion.created/updated; undefined for the rest. */
  conversionId: number | undefined
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})$/

/** Milliseconds since the epoch for an ISO 8601 time with a zone, else NaN. */
function isoTime(value: unknown): number {
  return typeof value === 'string' && ISO_TIME.test(value) ? Date.parse(value) : Number.NaN
}

function invalid(detail: string): WebhookError {
  return new WebhookError('invalid_payload', `The event does not match the spec: ${detail}`)
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const NULLABLE_INTEGER = ['programId', 'channelId'] as const
const NULLABLE_STRING = ['saleAmount', 'commission', 'currency'] as const

function checkConversion(value: unknown): asserts value is Conversion {
  if (!isObject(value)) throw invalid('data.conversion must be an object')
  if (!Number.isSafeInteger(value.id)) throw invalid('data.conversion.id must be an integer')
  if (typeof value.status !== 'string' || value.status === '') {
    throw invalid('data.conversion.status must be a non-empty string')
  }
  // Fields the spec marks nullable may also be absent; they read as null so the
  // types hold. A present field of the wrong type is refused.
  for (const key of NULLABLE_INTEGER) {
    const field = value[key]
    if (field === undefined) value[key] = null
    else if (field !== null && !Number.isSafeInteger(field)) {
      throw invalid(`data.conversion.${key} must be an integer or null`)
    }
  }
  for (const key of NULLABLE_STRING) {
    const field = value[key]
    if (field === undefined) value[key] = null
    else if (field !== null && typeof field !== 'string') {
      throw invalid(`data.conversion.${key} must be a string or null`)
    }
  }
  const occurredAt = value.occurredAt
  if (occurredAt === undefined) value.occurredAt = null
  else if (occurredAt !== null && Number.isNaN(isoTime(occurredAt))) {
    throw invalid('data.conversion.occurredAt must be an ISO 8601 time or null')
  }
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
  const createdAtMs = isoTime(value.createdAt)
  if (Number.isNaN(createdAtMs)) throw invalid('createdAt must be an ISO 8601 time')
  if (!isObject(data)) throw invalid('data must be an object')
  let conversionId: number | undefined
  // Only the types the spec defines are ordered; a future type is de-duplicated
  // alone, so a shape we cannot know yet is never refused.
  if (type === 'conversion.created' || type === 'conversion.updated') {
    checkConversion(data.conversion)
    conversionId = data.conversion.id
  }
  return { event: value as unknown as AnyWebhookEvent, createdAtMs, conversionId }
}

import { CONVERSION_EVENT_TYPES, CONVERSION_STATUSES } from '@affiliate-webhooks/core'
import { DELIVERY_STATUSES } from '@affiliate-webhooks/core/internal'
import type { DeliveryStatus } from '../delivery/schedule.js'
import { checkWebhookUrl } from '../delivery/url-rules/webhook-url.js'
import { ApiError } from '../shared/api-error.js'
import { characterCount } from '../shared/characters.js'
import { bodyObject, Fields } from '../shared/fields.js'
import type { ConversionRecord } from '../shared/records.js'

/** Event types an endpoint can subscribe to. `webhook.test` is sent only by the test route. */
export const SUBSCRIBABLE_EVENTS = CONVERSION_EVENT_TYPES
// The spec's lists, one copy: core declares them.
export { CONVERSION_STATUSES, DELIVERY_STATUSES }
/** Longest endpoint description, in characters (code points, as every limit). */
export const MAX_DESCRIPTION_LENGTH = 255

/** The fields of a webhook endpoint a request may set. */
export interface WebhookInput {
  url?: string
  events?: string[]
  description?: string | null
  status?: 'active' | 'disabled'
}

/**
 * Checks a POST (`partial` false: url and events required) or PATCH body
 * (`partial` true) of /v1/webhooks: 400 with one entry per field, or 422
 * `url_not_allowed`. Events are de-duplicated.
 */
export function parseWebhookInput(
  raw: unknown,
  options: { partial: boolean; allowLoopback: boolean },
): WebhookInput {
  const body = bodyObject(raw)
  const fields = new Fields()
  const input: WebhookInput = {}
  let refused: string | undefined

  if (body.url === undefined || body.url === null) {
    if (!options.partial || body.url === null) fields.required('url')
  } else if (typeof body.url !== 'string') {
    fields.invalid('url', 'must be a string')
  } else {
    const verdict = checkWebhookUrl(body.url, options.allowLoopback)
    if (verdict.ok) input.url = verdict.url
    else if (verdict.kind === 'invalid_format') fields.invalid('url', verdict.reason)
    else refused = verdict.reason
  }

  if (body.events === undefined || body.events === null) {
    if (!options.partial || body.events === null) fields.required('events')
  } else if (!Array.isArray(body.events)) {
    fields.invalid('events', 'must be an array of event types')
  } else if (body.events.length === 0) {
    fields.required('events')
  } else {
    const unknown = body.events.find(
      (event) => !(SUBSCRIBABLE_EVENTS as readonly unknown[]).includes(event),
    )
    if (unknown !== undefined) {
      fields.invalid(
        'events',
        `has an unknown event type ${JSON.stringify(unknown)}; one or more of ${SUBSCRIBABLE_EVENTS.join(', ')}`,
      )
    } else input.events = [...new Set(body.events as string[])]
  }

  if (body.description === null) {
    input.description = null
  } else if (body.description !== undefined) {
    if (typeof body.description !== 'string') fields.invalid('description', 'must be a string')
    else if (characterCount(body.description) > MAX_DESCRIPTION_LENGTH) {
      fields.invalid('description', `must be at most ${MAX_DESCRIPTION_LENGTH} characters`)
    } else input.description = body.description
  }

  if (options.partial && body.status !== undefined) {
    if (body.status === 'active' || body.status === 'disabled') input.status = body.status
    else fields.invalid('status', 'must be active or disabled')
  }
  fields.done()
  if (refused !== undefined) {
    throw new ApiError('url_not_allowed', `This URL is not allowed: ${refused}.`)
  }
  return input
}

/** Rows per page unless asked: the spec's default. */
export const DEFAULT_PAGE_SIZE = 10
/** Most rows per page. */
export const MAX_PAGE_SIZE = 100

/** `page` (from 1) and `size` (1 to 100, default 10) of a list, each bad one noted in `fields`. */
export function readPageQuery(
  query: URLSearchParams,
  fields: Fields,
): { page: number; size: number } {
  const integer = (name: string, fallback: number, max: number) => {
    const value = query.get(name)
    if (value === null) return fallback
    const number = /^\d{1,9}$/.test(value) ? Number(value) : Number.NaN
    if (!(number >= 1 && number <= max)) {
      fields.invalid(
        name,
        max === Number.MAX_SAFE_INTEGER
          ? 'must be a whole number from 1'
          : `must be a whole number from 1 to ${max}`,
      )
    }
    return number
  }
  return {
    page: integer('page', 1, Number.MAX_SAFE_INTEGER),
    size: integer('size', DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE),
  }
}

/** One of `allowed`, from the query's `name`, or undefined; a value outside them is noted in `fields`. */
export function readEnum<T extends string>(
  query: URLSearchParams,
  name: string,
  allowed: readonly T[],
  fields: Fields,
): T | undefined {
  const value = query.get(name)
  if (value === null) return undefined
  if ((allowed as readonly string[]).includes(value)) return value as T
  fields.invalid(name, `must be one of ${allowed.join(', ')}`)
  return undefined
}

/** page, size and status of the deliveries list, or 400 `invalid_format` per bad parameter. */
export function parseDeliveryQuery(query: URLSearchParams): {
  page: number
  size: number
  status: DeliveryStatus | undefined
} {
  const fields = new Fields()
  const { page, size } = readPageQuery(query, fields)
  const status = readEnum(query, 'status', DELIVERY_STATUSES, fields)
  fields.done()
  return { page, size, status }
}

/**
 * Checks the body of `POST /emulator/conversions`. An optional field the body
 * does not name keeps its `earlier` value (an update with only id and status
 * never wipes the amounts); without an earlier value it is null. An explicit
 * null clears it.
 */
export function parseConversionInput(raw: unknown, earlier?: ConversionRecord): ConversionRecord {
  const body = bodyObject(raw)
  const fields = new Fields()
  if (body.id === undefined || body.id === null) fields.required('id')
  else if (!Number.isSafeInteger(body.id)) fields.invalid('id', 'must be an integer')
  if (body.status === undefined || body.status === null) fields.required('status')
  else if (!(CONVERSION_STATUSES as readonly unknown[]).includes(body.status)) {
    fields.invalid('status', `must be one of ${CONVERSION_STATUSES.join(', ')}`)
  }
  const optional = (name: string, check: (value: unknown) => boolean, rule: string) => {
    const value = body[name]
    if (value === undefined) return earlier?.[name as keyof ConversionRecord] ?? null
    if (value === null) return null
    if (!check(value)) fields.invalid(name, rule)
    return value
  }
  const integer = (value: unknown) => Number.isSafeInteger(value)
  const decimal = (value: unknown) => typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value)
  const code = (value: unknown) => typeof value === 'string' && /^[A-Z]{3}$/.test(value)
  const time = (value: unknown) => typeof value === 'string' && !Number.isNaN(Date.parse(value))
  const conversion = {
    id: body.id as number,
    programId: optional('programId', integer, 'must be an integer or null') as number | null,
    channelId: optional('channelId', integer, 'must be an integer or null') as number | null,
    status: body.status as string,
    saleAmount: optional('saleAmount', decimal, 'must be a decimal string (12.50) or null') as
      | string
      | null,
    commission: optional('commission', decimal, 'must be a decimal string (12.50) or null') as
      | string
      | null,
    currency: optional('currency', code, 'must be an ISO 4217 code (EUR) or null') as string | null,
    occurredAt: optional('occurredAt', time, 'must be an ISO 8601 time or null') as string | null,
  }
  fields.done()
  return conversion
}

/** Checks the body of `POST /emulator/clock`: `advanceMs`, a number >= 0. */
export function parseAdvance(raw: unknown): number {
  const body = bodyObject(raw)
  const fields = new Fields()
  const value = body.advanceMs
  if (value === undefined || value === null) fields.required('advanceMs')
  else if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    fields.invalid('advanceMs', 'must be a number of milliseconds >= 0')
  }
  fields.done()
  return value as number
}

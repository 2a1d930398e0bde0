import { type CONVERSION_STATUSES, EVENT_TYPES } from './spec-lists.js'

/** Conversion statuses in the spec, widened so a status added later still type-checks. */
export type ConversionStatus = (typeof CONVERSION_STATUSES)[number] | (string & {})

/** Event types in the spec, widened so a type added later still type-checks. */
export type EventType = 'conversion.created' | 'conversion.updated' | 'webhook.test' | (string & {})

/** A conversion as the spec's "Conversion object" table defines it. */
export interface Conversion {
  /** Stable across all events of the same sale. */
  id: number
  programId: number | null
  channelId: number | null
  status: ConversionStatus
  /** Decimal string exactly as the network reported it; never a float. */
  saleAmount: string | null
  /** Decimal string exactly as the network reported it; never a float. */
  commission: string | null
  /** ISO 4217 code for both amounts. */
  currency: string | null
  /** ISO 8601 time of the sale per the network. */
  occurredAt: string | null
}

/** The fields every event shares, around its `type` and `data`. */
export interface EventEnvelope<Type extends string, Data> {
  /** Event id, prefix `evt_`; the de-duplication key. */
  id: string
  type: Type
  /** ISO 8601 creation time; orders the events of one conversion. */
  createdAt: string
  data: Data
}

/** `data` of a conversion event: the conversion, plus any field the service adds later. */
export interface ConversionEventData {
  conversion: Conversion
  [key: string]: unknown
}

/** Sent the first time a conversion attributed to the account is seen. */
export type ConversionCreatedEvent = EventEnvelope<'conversion.created', ConversionEventData>
/** Sent when a conversion's status changed. */
export type ConversionUpdatedEvent = EventEnvelope<'conversion.updated', ConversionEventData>
/** Either conversion event; both carry `data.conversion`. */
export type ConversionEvent = ConversionCreatedEvent | ConversionUpdatedEvent
/** The spec does not show the data of a test event, so it stays an open record. */
export type WebhookTestEvent = EventEnvelope<'webhook.test', Record<string, unknown>>

/** The events the spec defines, discriminated on `type`: `switch (event.type)` narrows. */
export type WebhookEvent = ConversionCreatedEvent | ConversionUpdatedEvent | WebhookTestEvent

/** An event of a type this version does not know yet; accepted, never a crash. */
export type UnknownWebhookEvent = EventEnvelope<string & {}, Record<string, unknown>>

/** Whatever a verified delivery can carry. Narrow it with {@link isKnownEvent}. */
export type AnyWebhookEvent = WebhookEvent | UnknownWebhookEvent

const KNOWN_TYPES: ReadonlySet<string> = new Set(EVENT_TYPES)

/** Narrows to the discriminated {@link WebhookEvent} union. */
export function isKnownEvent(event: AnyWebhookEvent): event is WebhookEvent {
  return KNOWN_TYPES.has(event.type)
}

/** True for `conversion.created` and `conversion.updated`. */
export function isConversionEvent(event: AnyWebhookEvent): event is ConversionEvent {
  return event.type === 'conversion.created' || event.type === 'conversion.updated'
}

/**
 * Helpers to test your own handlers with deliveries signed exactly as the service
 * signs them. `import { signPayload } from '@affiliate-webhooks/core/testing'`.
 */

// The production signer (the emulator signs every delivery with it), re-exported
// here so `import { signPayload } from '@affiliate-webhooks/core/testing'` keeps working.
export { type SignPayloadOptions, signPayload } from '../signature/sign.js'

import type {
  Conversion,
  ConversionCreatedEvent,
  ConversionStatus,
  ConversionUpdatedEvent,
  WebhookTestEvent,
} from '../events/event-types.js'
import { signPayload } from '../signature/sign.js'

function randomHex(bytes: number): string {
  const buffer = crypto.getRandomValues(new Uint8Array(bytes))
  let hex = ''
  for (const byte of buffer) hex += byte.toString(16).padStart(2, '0')
  return hex
}

/** A fresh `evt_...` id. */
export const randomEventId = (): string => `evt_${randomHex(12)}`

// Events built without a createdAt are stamped now, each at least a millisecond
// after the last: two built in the same millisecond for the same conversion would
// otherwise share an order, and the second be judged stale.
let lastDefaultMs = 0
const defaultNow = (): number => {
  lastDefaultMs = Math.max(Date.now(), lastDefaultMs + 1)
  return lastDefaultMs
}

const toIso = (value: string | Date | number | undefined): string =>
  value === undefined
    ? new Date(defaultNow()).toISOString()
    : typeof value === 'string'
      ? value
      : new Date(value).toISOString()

/** Options of {@link buildConversionEvent}. */
export interface BuildConversionEventOptions<
  T extends 'conversion.created' | 'conversion.updated',
> {
  type?: T
  id?: string
  /** Default: now, and always later than the last event built without one. */
  createdAt?: string | Date | number
  /** Fields to set on the conversion; the rest get realistic defaults. */
  conversion?: Partial<Conversion> & { status?: ConversionStatus }
}

/** A conversion event shaped as the spec's tables say. */
export function buildConversionEvent<
  T extends 'conversion.created' | 'conversion.updated' = 'conversion.created',
>(
  options: BuildConversionEventOptions<T> = {},
): T extends 'conversion.updated' ? ConversionUpdatedEvent : ConversionCreatedEvent {
  const conversion: Conversion = {
    id: 1000,
    programId: 42,
    channelId: 7,
    status: 'pending',
    saleAmount: '129.90',
    commission: '9.09',
    currency: 'EUR',
    occurredAt: '2026-11-20T09:15:00.000Z',
    ...options.conversion,
  }
  return {
    id: options.id ?? randomEventId(),
    type: options.type ?? 'conversion.created',
    createdAt: toIso(options.createdAt),
    data: { conversion },
  } as T extends 'conversion.updated' ? ConversionUpdatedEvent : ConversionCreatedEvent
}

/** Options of {@link buildTestEvent}. */
export interface BuildTestEventOptions {
  id?: string
  createdAt?: string | Date | number
  data?: Record<string, unknown>
}

/** A `webhook.test` event, as POST /v1/webhooks/{id}/test queues one. */
export function buildTestEvent(options: BuildTestEventOptions = {}): WebhookTestEvent {
  return {
    id: options.id ?? randomEventId(),
    type: 'webhook.test',
    createdAt: toIso(options.createdAt),
    data: options.data ?? {},
  }
}

/** Options of {@link signedDelivery}. */
export interface SignedDeliveryOptions {
  secret: string
  /** An event object (serialised with JSON.stringify) or the exact body text. */
  event: object | string
  timestamp?: number
  /** `Service-Delivery-Attempt`. Default 1. */
  attempt?: number
}

/** One delivery as the service sends it: lowercase headers and the exact body text. */
export interface SignedDelivery {
  headers: Record<string, string>
  body: string
}

// The service sends Service-Event-Id; a body that is not JSON simply has none.
function idOf(body: string): unknown {
  try {
    return (JSON.parse(body) as { id?: unknown } | null)?.id
  } catch {
    return undefined
  }
}

/** Headers and body of one delivery, as the service would send it. */
export async function signedDelivery(options: SignedDeliveryOptions): Promise<SignedDelivery> {
  const body = typeof options.event === 'string' ? options.event : JSON.stringify(options.event)
  const id = typeof options.event === 'string' ? idOf(body) : (options.event as { id?: unknown }).id
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'service-signature': await signPayload({
      secret: options.secret,
      payload: body,
      ...(options.timestamp === undefined ? {} : { timestamp: options.timestamp }),
    }),
    'service-delivery-attempt': String(options.attempt ?? 1),
  }
  if (typeof id === 'string') headers['service-event-id'] = id
  return { headers, body }
}

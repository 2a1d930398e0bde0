import { signPayload } from '@affiliate-webhooks/core'

/** The User-Agent of every attempt the engine sends (`emulator` and `simulate`). */
export const USER_AGENT = 'affiliate-webhooks-emulator/0.1'

/** What {@link deliveryHeaders} signs and sends. */
export interface DeliveryHeadersOptions {
  /** The endpoint secret, `whsec_` prefix included. */
  secret: string
  /** The exact body. */
  body: string | Uint8Array
  /** `Service-Delivery-Attempt`, 1 to 8. */
  attempt: number
  /** `Service-Event-Id`; left out when empty. */
  eventId: string | undefined
  /** Unix seconds to sign at. Default now: every attempt is signed afresh. */
  timestamp?: number
  extra?: Readonly<Record<string, string>>
}

/** The request headers of one attempt, as the spec's "Request headers on each delivery" lists them. */
export async function deliveryHeaders(
  options: DeliveryHeadersOptions,
): Promise<Record<string, string>> {
  const signature = await signPayload({
    secret: options.secret,
    payload: options.body,
    ...(options.timestamp === undefined ? {} : { timestamp: options.timestamp }),
  })
  const headers: Record<string, string> = {
    'User-Agent': USER_AGENT,
    ...options.extra,
    'Content-Type': 'application/json',
    'Service-Delivery-Attempt': String(options.attempt),
    'Service-Signature': signature,
  }
  if (options.eventId) headers['Service-Event-Id'] = options.eventId
  return headers
}

/** id, type and conversion id of a body, when it is an event. */
export function describeEvent(body: string): {
  eventId: string
  eventType: string
  conversionId: number | undefined
} {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return { eventId: '', eventType: '', conversionId: undefined }
  }
  const event = (parsed ?? {}) as {
    id?: unknown
    type?: unknown
    data?: { conversion?: { id?: unknown } }
  }
  const conversionId = event.data?.conversion?.id
  return {
    eventId: typeof event.id === 'string' ? event.id : '',
    eventType: typeof event.type === 'string' ? event.type : '',
    conversionId: typeof conversionId === 'number' ? conversionId : undefined,
  }
}

import { rowOf, type WebhookError } from '../errors.js'
import type { AnyWebhookEvent } from '../events/event-types.js'

/** What happened to a delivery. */
export type Outcome =
  /** The handler ran and returned: 200. */
  | 'processed'
  /** This event id was handled before: 200, handler not called. */
  | 'duplicate'
  /** A newer event of the same conversion was handled: 200, handler not called. */
  | 'stale'
  /** No handler is configured for this event type: 200. */
  | 'ignored'
  /** Handed to the `queue` option's queue, which holds it durably: 200. */
  | 'queued'
  /** Another attempt of this event is running: 409, the service retries. */
  | 'in_progress'
  /** Refused before the handler: bad size, body, signature, timestamp, JSON or envelope (4xx). */
  | 'rejected'
  /** The handler threw or ran past `answerWithinMs`, or the store failed: 5xx, the service retries. */
  | 'failed'

/** The outcomes answered 200. */
export type AcknowledgedOutcome = 'processed' | 'duplicate' | 'stale' | 'ignored' | 'queued'

/** The answer to one delivery: what to send back, and what happened. */
export interface ReceiveResult {
  status: number
  /** Small JSON text to send back; the service keeps its first 500 characters. */
  body: string
  /** Headers to send with the answer. */
  headers: Readonly<Record<string, string>>
  outcome: Outcome
  /** The verified event, once it got that far. */
  event?: AnyWebhookEvent
  /** Why the delivery was not acknowledged. */
  error?: WebhookError
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' } as const

const okBody = (outcome: AcknowledgedOutcome) => JSON.stringify({ received: true, outcome })
// Built once: every 200 answer shares its body text and headers object.
const BODIES: Readonly<Record<AcknowledgedOutcome, string>> = {
  processed: okBody('processed'),
  duplicate: okBody('duplicate'),
  stale: okBody('stale'),
  ignored: okBody('ignored'),
  queued: okBody('queued'),
}

/** The 200 answer for an outcome; a literal, cheaper than spreading a template per request. */
export const acknowledge = (
  outcome: AcknowledgedOutcome,
  event: AnyWebhookEvent,
): ReceiveResult => ({
  status: 200,
  body: BODIES[outcome],
  headers: JSON_HEADERS,
  outcome,
  event,
})

/** Keeps every body inside the 500 characters the service stores; the code comes first. */
const MAX_MESSAGE = 300
const clip = (message: string) =>
  message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE - 1)}…` : message

/** Headers beyond the content type, for the codes that need them. */
function errorHeaders(error: WebhookError): Readonly<Record<string, string>> {
  if (error.code === 'method_not_allowed') return { ...JSON_HEADERS, allow: 'POST' }
  // Refusing a large or late body means not reading the rest, so the connection cannot be reused.
  if (error.code === 'payload_too_large' || error.code === 'body_timeout') {
    return { ...JSON_HEADERS, connection: 'close' }
  }
  return JSON_HEADERS
}

/** The outcome from the code's row; by status for a code another copy of the package made up. */
const outcomeOf = (error: WebhookError): Outcome =>
  rowOf(error.code)?.outcome ?? (error.status >= 500 ? 'failed' : 'rejected')

/** The answer for an error: its status, and a body with its code and a clipped message. */
export function refuse(error: WebhookError, event?: AnyWebhookEvent): ReceiveResult {
  const result: ReceiveResult = {
    status: error.status,
    // The adapter before the message: both fit the 500 characters the service keeps.
    body: JSON.stringify({
      error:
        error.adapter === undefined
          ? { code: error.code, message: clip(error.message) }
          : { code: error.code, adapter: error.adapter, message: clip(error.message) },
    }),
    headers: errorHeaders(error),
    outcome: outcomeOf(error),
    error,
  }
  if (event !== undefined) result.event = event
  return result
}

/**
 * What a receiver's answer body says, when it is this library's JSON: the
 * `outcome` of a 200, or the `error.code` of a refusal. The one reader of it
 * (the simulator's counts, `doctor`'s causes); a body cut at 500 characters, or
 * any other text, says nothing.
 */
export function readReceiverAnswer(body: string | null | undefined): {
  outcome?: string
  code?: string
  /** The adapter that answered, where the code's fix depends on it (`raw_body_unavailable`). */
  adapter?: string
} {
  if (body?.[0] !== '{') return {}
  try {
    const answer = JSON.parse(body) as {
      outcome?: unknown
      error?: { code?: unknown; adapter?: unknown }
    }
    if (typeof answer.outcome === 'string') return { outcome: answer.outcome }
    const { code, adapter } = answer.error ?? {}
    if (typeof code === 'string') {
      return typeof adapter === 'string' ? { code, adapter } : { code }
    }
  } catch {
    // Not JSON, or cut short.
  }
  return {}
}

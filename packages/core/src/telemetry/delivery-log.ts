import type { WebhookError, WebhookErrorCode } from '../errors.js'
import type { AnyWebhookEvent } from '../events/event-types.js'
import { getHeader } from '../http/headers.js'
import { ATTEMPT_HEADER, type DeliveryInput, EVENT_ID_HEADER } from '../signature/verify.js'

/**
 * Where a receiver reports what it did not acknowledge: `console`, pino, or
 * anything with `warn` and `error` that takes a message string first.
 */
export interface Logger {
  warn(message: string, ...rest: unknown[]): unknown
  error(message: string, ...rest: unknown[]): unknown
}

/** What the log needs of an answer that was not 2xx. */
export interface Unacknowledged {
  status: number
  error?: WebhookError | undefined
  event?: AnyWebhookEvent | undefined
}

/**
 * Refusals anyone can cause without the secret: an attacker could send them by
 * the thousand, so a burst of them is summarised instead of logged one by one.
 * A body that stalls, trickles, lies about its length or is cut off is one of
 * them: it never got as far as its signature.
 */
const UNAUTHENTICATED = new Set<WebhookErrorCode>([
  'payload_too_large',
  'body_timeout',
  'body_incomplete',
  'missing_signature',
  'malformed_signature',
  'signature_mismatch',
  'timestamp_outside_tolerance',
])

/** How long a burst of unauthenticated refusals is summarised for, ms. */
export const BURST_WINDOW_MS = 60_000

const PREFIX = 'affiliate-webhooks:'
const MAX_DETAIL = 300
const clip = (text: string) =>
  text.length > MAX_DETAIL ? `${text.slice(0, MAX_DETAIL - 1)}…` : text

/** The user's logger, or none for `false`; `console` when not given. */
export function resolveLogger(
  logger: Logger | false | undefined,
  caller: string,
): Logger | undefined {
  if (logger === false) return undefined
  if (logger === undefined) return console
  if (typeof logger?.warn !== 'function' || typeof logger?.error !== 'function') {
    throw new TypeError(
      `${caller}: \`logger\` must have warn and error methods (console, pino), or be false`,
    )
  }
  return logger
}

/** What was wrong, in one line: the status, the code, the event, and why. */
function describe(answer: Unacknowledged, input: DeliveryInput): string {
  const code = answer.error?.code ?? 'error'
  const event = answer.event
  // The input may be anything at all (that is what was refused): reading it must not throw.
  const header = (name: string) => {
    try {
      return getHeader(input.headers, name)
    } catch {
      return undefined
    }
  }
  const attempt = header(ATTEMPT_HEADER)
  let which: string
  if (event !== undefined) {
    which = `${event.id} (${event.type}${attempt ? `, attempt ${attempt}` : ''})`
  } else {
    // Before the signature is checked the id is only the sender's word for it.
    // Only printed when it looks like an id: a header must not write the log's text.
    const raw = header(EVENT_ID_HEADER)
    const claimed = raw !== undefined && /^[\w-]{1,64}$/.test(raw) ? raw : undefined
    which = claimed
      ? `${claimed} (unverified id${attempt ? `, attempt ${attempt}` : ''})`
      : 'a delivery with no event id'
  }
  const cause = answer.error?.cause
  let why = clip(answer.error?.message ?? '')
  if (code === 'handler_failed' && cause instanceof Error) {
    // The user's own exception, with its stack: the one thing they need to fix it.
    return `${PREFIX} ${answer.status} ${code} ${which}: handler threw ${cause.stack ?? `${cause.name}: ${cause.message}`}`
  }
  if (code === 'handler_failed') why = `handler threw ${clip(String(cause))}`
  else if (cause instanceof Error) why += ` (${clip(cause.message)})`
  return `${PREFIX} ${answer.status} ${code} ${which}: ${why}`
}

/**
 * One line per delivery that was not acknowledged: `error` for 5xx (the receiver
 * or the handler failed), `warn` for the rest. Unauthenticated refusals are
 * logged once per window and then counted, with a summary when the window ends.
 * Never the body, the secret or a signature.
 */
export function createDeliveryLog(
  logger: Logger,
  now: () => number = Date.now,
): (answer: Unacknowledged, input: DeliveryInput) => void {
  let windowEnds = Number.NEGATIVE_INFINITY
  let suppressed = new Map<string, number>()
  let timer: ReturnType<typeof setTimeout> | undefined

  const flush = () => {
    timer = undefined
    if (suppressed.size === 0) return
    const total = [...suppressed.values()].reduce((a, b) => a + b, 0)
    const counts = [...suppressed].map(([code, n]) => `${code} x${n}`).join(', ')
    suppressed = new Map()
    logger.warn(
      `${PREFIX} ${total} more deliver${total === 1 ? 'y' : 'ies'} refused before verification in the last ${BURST_WINDOW_MS / 1000} s (${counts}); not logged one by one`,
    )
  }

  return (answer, input) => {
    const code = answer.error?.code
    if (code !== undefined && UNAUTHENTICATED.has(code)) {
      const at = now()
      if (at < windowEnds) {
        suppressed.set(code, (suppressed.get(code) ?? 0) + 1)
        // The summary comes when the window ends, even if nothing else arrives.
        if (timer === undefined) {
          timer = setTimeout(flush, windowEnds - at)
          ;(timer as { unref?: () => void }).unref?.()
        }
        return
      }
      if (timer !== undefined) clearTimeout(timer)
      flush()
      windowEnds = at + BURST_WINDOW_MS
    }
    const line = describe(answer, input)
    if (answer.status >= 500) logger.error(line)
    else logger.warn(line)
  }
}

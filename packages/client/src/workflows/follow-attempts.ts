import type { Client } from '../client.js'
import { delay } from '../http/delay.js'
import { PAGE_SIZE } from '../http/page-walk.js'
import type { LoggedAttempt } from '../resources/emulator-controls.js'
import type { AttemptSeen } from './follow-events.js'

/** The spec's attempts per round: the eighth failing fails the delivery. */
const LAST_ATTEMPT = 8

/** The delivery's status after a logged attempt; derived when an older emulator does not say. */
const statusAfter = (entry: LoggedAttempt): string =>
  entry.status ?? (entry.ok ? 'succeeded' : entry.attempt >= LAST_ATTEMPT ? 'failed' : 'retrying')

/** One logged attempt as the follow shows it: its own number, answer and the status it left. */
export function loggedAttemptSeen(entry: LoggedAttempt, at: string): AttemptSeen {
  const status = statusAfter(entry)
  return {
    type: 'attempt',
    at,
    endpointId: entry.webhookId,
    deliveryId: entry.deliveryId,
    eventId: entry.eventId,
    eventType: entry.eventType,
    attempt: entry.attempt,
    status,
    responseStatus: entry.responseStatus,
    outcome: entry.outcome ?? null,
    errorCode: entry.errorCode ?? null,
    durationMs: entry.durationMs,
    errorMessage: entry.errorMessage,
    nextAttemptAt: status === 'retrying' ? (entry.nextAttemptAt ?? null) : null,
  }
}

/**
 * The attempts of one look not shown before: `logged` is the delivery's attempt
 * log as it stands (oldest first, append-only), `shown` how many of it earlier
 * looks showed. Each attempt is its own entry, so one made between two looks,
 * or several made by one clock move, each come out once, in the order made,
 * with their own number and answer. Pure: the caller keeps `shown`.
 */
export function newLoggedAttempts(
  logged: readonly LoggedAttempt[],
  shown: number,
  at: string = new Date().toISOString(),
): { attempts: AttemptSeen[]; shown: number } {
  const fresh = logged.slice(shown)
  return {
    attempts: fresh.map((entry) => loggedAttemptSeen(entry, at)),
    shown: Math.max(shown, logged.length),
  }
}

/** True for a status after which no attempt follows (until a replay). */
export const isFinal = (status: string | undefined): boolean =>
  status === 'succeeded' || status === 'failed'

/**
 * One delivery on the emulator followed until it succeeds or fails: yields each
 * attempt once, in the order made, read from the emulator's attempt log
 * (`GET /emulator/log?deliveryId=`, not counted against the rate limit) once
 * per `intervalMs`, so attempts made between two looks, or by a move of the
 * emulator's clock, are none of them lost or shown twice. A look that finds no
 * new attempt reads the delivery too, for a delivery failed without one (its
 * endpoint disabled). Returns the delivery's final status. Stops when `signal`
 * aborts, rejecting with its reason.
 */
export async function* followDeliveryAttempts(
  api: Client,
  endpointId: string,
  deliveryId: string,
  options: { signal?: AbortSignal | undefined; intervalMs?: number | undefined } = {},
): AsyncGenerator<AttemptSeen, string> {
  const { signal } = options
  const call = signal ? { signal, deliveryId } : { deliveryId }
  let shown = 0
  let last: string | undefined
  const look = async function* () {
    const fresh = newLoggedAttempts(await api.emulator.log(call), shown)
    shown = fresh.shown
    for (const attempt of fresh.attempts) {
      last = attempt.status
      yield attempt
    }
    return fresh.attempts.length
  }
  for (;;) {
    const found = yield* look()
    if (isFinal(last)) return last as string
    if (found === 0) {
      const delivery = await findDelivery(api, endpointId, deliveryId, signal)
      if (delivery && isFinal(delivery.status)) {
        // An attempt may have ended between the two reads: the log says last.
        yield* look()
        return isFinal(last) ? (last as string) : delivery.status
      }
    }
    await delay(options.intervalMs ?? 1000, signal)
  }
}

/** The delivery among the endpoint's newest page, if there. */
async function findDelivery(
  api: Client,
  endpointId: string,
  deliveryId: string,
  signal: AbortSignal | undefined,
) {
  let read = 0
  for await (const delivery of api.webhooks.deliveries(endpointId, {
    size: PAGE_SIZE,
    ...(signal ? { signal } : {}),
  })) {
    if (delivery.id === deliveryId) return delivery
    if (++read === PAGE_SIZE) break
  }
  return undefined
}

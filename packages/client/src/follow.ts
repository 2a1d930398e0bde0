import { readReceiverAnswer } from '@affiliate-webhooks/core'
import type { Client } from './client.js'
import { delay } from './delay.js'
import type { Delivery } from './types.js'

/** One thing `followDeliveries` saw happen. */
export type FollowEvent =
  | {
      type: 'attempt'
      /** When it was seen (ISO). */
      at: string
      deliveryId: string
      eventId: string | null
      eventType: string | null
      /** The attempt's number in its round, when the service says. */
      attempt: number | null
      /** The delivery's status after it: succeeded, retrying or failed. */
      status: string
      responseStatus: number | null
      /** The receiver's own error code (`signature_mismatch`...), when it answered one. */
      errorCode: string | null
      durationMs: number | null
      /** Why nothing answered (refused, timed out). */
      errorMessage: string | null
    }
  | { type: 'endpoint'; at: string; endpointId: string; status: string }

/** Options of {@link followDeliveries} and {@link waitForAttempt}. */
export interface FollowOptions {
  signal?: AbortSignal
  /**
   * Least time between two requests, ms. Default 1000: one request a second,
   * half the service's 120 a minute, so other commands still have room.
   */
  intervalMs?: number
}

/** What changes when an attempt is made; a replay or a disable alone changes no count. */
const attemptsOf = (d: Delivery) =>
  typeof d.attemptsTotal === 'number' ? d.attemptsTotal : (d.attempts ?? null)
const fingerprint = (d: Delivery) =>
  [attemptsOf(d), d.status, d.responseStatus, d.durationMs, d.errorMessage].join('|')

/** The newest page of an endpoint's deliveries: one request. */
async function newest(api: Client, id: string, signal?: AbortSignal): Promise<Delivery[]> {
  const rows: Delivery[] = []
  for await (const delivery of api.webhooks.deliveries(id, {
    size: 100,
    ...(signal ? { signal } : {}),
  })) {
    rows.push(delivery)
    if (rows.length === 100) break
  }
  return rows
}

const attemptEvent = (d: Delivery): FollowEvent => ({
  type: 'attempt',
  at: new Date().toISOString(),
  deliveryId: d.id,
  eventId: d.eventId ?? null,
  eventType: d.eventType ?? null,
  attempt: typeof d.attempts === 'number' ? d.attempts : null,
  status: d.status,
  responseStatus: d.responseStatus,
  errorCode: readReceiverAnswer(d.responseBody).code ?? null,
  durationMs: d.durationMs,
  errorMessage: d.errorMessage ?? null,
})

/**
 * A live tail of an endpoint: each delivery attempt as it is seen, and each
 * change of the endpoint's status (disabled after the failure streak, enabled
 * again). It polls, alternating the newest page of deliveries and the endpoint,
 * at most one request per `intervalMs`; what happened before it started is not
 * repeated. Two attempts of one delivery between two polls (an emulator with a
 * large time scale) show as the later one. Ends when `signal` aborts.
 */
export async function* followDeliveries(
  api: Client,
  endpointId: string,
  options: FollowOptions = {},
): AsyncGenerator<FollowEvent> {
  const { signal } = options
  const interval = options.intervalMs ?? 1000
  const call = signal ? { signal } : {}
  const seen = new Map((await newest(api, endpointId, signal)).map((d) => [d.id, fingerprint(d)]))
  await delay(interval, signal)
  let status = (await api.webhooks.get(endpointId, call)).status
  let disabled: FollowEvent | undefined
  for (;;) {
    await delay(interval, signal)
    // Oldest first, so lines come in the order the attempts were made.
    for (const delivery of (await newest(api, endpointId, signal)).reverse()) {
      const print = fingerprint(delivery)
      const before = seen.get(delivery.id)
      seen.set(delivery.id, print)
      if (before === print || delivery.status === 'pending') continue
      const made = attemptsOf(delivery)
      if (before !== undefined && made !== null && before.split('|')[0] === String(made)) continue
      yield attemptEvent(delivery)
    }
    if (disabled) yield disabled
    disabled = undefined
    await delay(interval, signal)
    const endpoint = await api.webhooks.get(endpointId, call)
    if (endpoint.status === status) continue
    status = endpoint.status
    const change: FollowEvent = {
      type: 'endpoint',
      at: new Date().toISOString(),
      endpointId,
      status,
    }
    // A disable is said after the next look at the deliveries, so the attempts that
    // caused it come first; an enable at once, before the replays it lets through.
    if (status === 'disabled') disabled = change
    else yield change
  }
}

/**
 * Waits until a delivery's first attempt (or the next one, after a replay) has
 * been made, and returns the delivery as it is then. Polls the newest page of
 * deliveries once per `intervalMs`.
 */
export async function waitForAttempt(
  api: Client,
  endpointId: string,
  deliveryId: string,
  options: FollowOptions = {},
): Promise<FollowEvent & { type: 'attempt' }> {
  for (;;) {
    const found = (await newest(api, endpointId, options.signal)).find((d) => d.id === deliveryId)
    if (found && found.status !== 'pending')
      return attemptEvent(found) as FollowEvent & { type: 'attempt' }
    await delay(options.intervalMs ?? 1000, options.signal)
  }
}

/**
 * One delivery followed until it succeeds or fails: yields it each time an
 * attempt has been made (or its status changed), polling the newest page of
 * deliveries once per `intervalMs`. Stops when `signal` aborts, rejecting with
 * its reason.
 */
export async function* followDelivery(
  api: Client,
  endpointId: string,
  deliveryId: string,
  options: FollowOptions = {},
): AsyncGenerator<Delivery> {
  let seen = ''
  for (;;) {
    const found = (await newest(api, endpointId, options.signal)).find((d) => d.id === deliveryId)
    if (found && found.status !== 'pending') {
      const print = fingerprint(found)
      if (print !== seen) yield found
      seen = print
      if (found.status === 'succeeded' || found.status === 'failed') return
    }
    await delay(options.intervalMs ?? 1000, options.signal)
  }
}

import { readReceiverAnswer } from '@affiliate-webhooks/core/internal'
import type { Client } from '../client.js'
import { delay } from '../http/delay.js'
import { isServiceError } from '../http/errors.js'
import { PAGE_SIZE } from '../http/page-walk.js'
import type { Delivery, RateLimitState } from '../types.js'
import {
  type FollowPlan,
  nextPoll,
  planFollow,
  type QuotaStop,
  quotaStop,
} from './follow-pacing.js'
import { type ServicePace, servicePace } from './service-pace.js'

/** One attempt of a delivery, as `followDeliveries` and `followDeliveryAttempts` saw it. */
export interface AttemptSeen {
  type: 'attempt'
  /** When it was seen (ISO). */
  at: string
  /** The endpoint the delivery goes to. */
  endpointId: string
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
  /** When the next attempt is due (ISO), while retrying, when the service says (the emulator does). */
  nextAttemptAt: string | null
}

/** One thing `followDeliveries` saw happen. */
export type FollowEvent =
  | AttemptSeen
  | { type: 'endpoint'; at: string; endpointId: string; status: string }

/** How `followDeliveries` paces itself, and why it stopped: for the caller to say. */
export type FollowNotice =
  /** Before the first look: the interval and what it costs. */
  | { type: 'plan'; at: string; plan: FollowPlan }
  /** The account's rate-limit window is nearly used up: the next look waits longer. */
  | { type: 'backoff'; at: string; delayMs: number; rateLimit: RateLimitState }
  /** The last event: the follow stopped before the monthly quota runs out. */
  | ({ type: 'stopped'; at: string } & QuotaStop)

/** Options of {@link followDeliveries}. */
export interface FollowOptions {
  signal?: AbortSignal
  /**
   * Real ms between two looks. Default: the service's batch interval (a minute,
   * divided by the emulator's time scale; see {@link servicePace}), at least 1 s.
   */
  intervalMs?: number
  /** The pace, when already known; default asked with {@link servicePace}. */
  pace?: ServicePace
  /** In [0, 1), for the jitter. Default Math.random. */
  random?: () => number
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
    size: PAGE_SIZE,
    ...(signal ? { signal } : {}),
  })) {
    rows.push(delivery)
    if (rows.length === PAGE_SIZE) break
  }
  return rows
}

/** A delivery as the attempt just seen, on endpoint `endpointId`. */
export const attemptSeen = (endpointId: string, d: Delivery): AttemptSeen => ({
  type: 'attempt',
  at: new Date().toISOString(),
  endpointId,
  deliveryId: d.id,
  eventId: d.eventId ?? null,
  eventType: d.eventType ?? null,
  attempt: typeof d.attempts === 'number' ? d.attempts : null,
  status: d.status,
  responseStatus: d.responseStatus,
  errorCode: readReceiverAnswer(d.responseBody).code ?? null,
  durationMs: d.durationMs,
  errorMessage: d.errorMessage ?? null,
  nextAttemptAt:
    d.status === 'retrying' && typeof d.nextAttemptAt === 'string' ? d.nextAttemptAt : null,
})

const now = () => new Date().toISOString()

/** The attempts among `page` not seen before (oldest first), remembering what was seen. */
function* newAttempts(
  endpointId: string,
  page: Delivery[],
  seen: Map<string, string>,
): Generator<AttemptSeen> {
  for (const delivery of [...page].reverse()) {
    const print = fingerprint(delivery)
    const before = seen.get(delivery.id)
    seen.set(delivery.id, print)
    if (before === print || delivery.status === 'pending') continue
    const made = attemptsOf(delivery)
    if (before !== undefined && made !== null && before.split('|')[0] === String(made)) continue
    yield attemptSeen(endpointId, delivery)
  }
}

/** A 429 `quota_exceeded` as the follow's last word; any other error is thrown on. */
function quotaExceeded(error: unknown, api: Client): FollowNotice {
  if (!isServiceError(error) || error.code !== 'quota_exceeded') throw error
  return { type: 'stopped', at: now(), reason: 'quota_exceeded', quota: api.quota, reserve: 0 }
}

/**
 * A live tail of an endpoint: each delivery attempt as it is seen, and each
 * change of the endpoint's status (disabled after the failure streak, enabled
 * again); what happened before it started is not repeated. A guest of the
 * account, whose rate limit and quota the publisher's production integration
 * shares: it looks once per batch interval of the service (nothing new can be
 * seen sooner; a minute, less on a faster emulator), with jitter, two calls a
 * look (the newest page of deliveries, then the endpoint). First it yields a
 * `plan` (the interval and the cost); a `backoff` when the account's rate-limit
 * window is nearly used up; and a last `stopped` before the monthly quota runs
 * out ({@link quotaStop}). Two attempts of one delivery between two looks show
 * as the later one. Ends when `signal` aborts, rejecting with its reason.
 */
export async function* followDeliveries(
  api: Client,
  endpointId: string,
  options: FollowOptions = {},
): AsyncGenerator<FollowEvent | FollowNotice> {
  const { signal } = options
  const call = signal ? { signal } : {}
  const random = options.random ?? Math.random
  const pace = options.pace ?? (await servicePace(api, call))
  const seen = new Map<string, string>()
  let status: string
  try {
    for (const d of await newest(api, endpointId, signal)) seen.set(d.id, fingerprint(d))
    status = (await api.webhooks.get(endpointId, call)).status
  } catch (error) {
    yield quotaExceeded(error, api)
    return
  }
  const plan = planFollow(pace, { intervalMs: options.intervalMs, quota: api.quota })
  yield { type: 'plan', at: now(), plan }
  let lowStreak = 0
  for (;;) {
    const stop = quotaStop(api.quota)
    if (stop) {
      yield { type: 'stopped', at: now(), ...stop }
      return
    }
    const next = nextPoll({
      intervalMs: plan.intervalMs,
      rateLimit: api.rateLimit,
      msUntilReset: api.msUntilRateLimitReset(),
      lowStreak,
      random: random(),
    })
    lowStreak = next.lowStreak
    if (next.rateLimit) {
      yield { type: 'backoff', at: now(), delayMs: next.delayMs, rateLimit: next.rateLimit }
    }
    await delay(next.delayMs, signal)
    let page: Delivery[]
    let endpoint: { status: string }
    try {
      page = await newest(api, endpointId, signal)
      endpoint = await api.webhooks.get(endpointId, call)
    } catch (error) {
      yield quotaExceeded(error, api)
      return
    }
    // The attempts first, so a disable comes after the failures that caused it.
    yield* newAttempts(endpointId, page, seen)
    if (endpoint.status !== status) {
      status = endpoint.status
      yield { type: 'endpoint', at: now(), endpointId, status }
    }
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
): Promise<AttemptSeen> {
  for (;;) {
    const found = (await newest(api, endpointId, options.signal)).find((d) => d.id === deliveryId)
    if (found && found.status !== 'pending') return attemptSeen(endpointId, found)
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

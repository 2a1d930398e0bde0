import type { Client } from '../client.js'
import { delay } from '../http/delay.js'
import { isServiceError } from '../http/errors.js'
import { PAGE_SIZE } from '../http/page-walk.js'
import type { Delivery } from '../types.js'
import {
  type AttemptSeen,
  attemptSeen,
  type FollowEvent,
  type FollowNotice,
} from './follow-events.js'
import { followLive } from './follow-live.js'
import { nextPoll, planFollow, quotaStop } from './follow-pacing.js'
import { type ServicePace, servicePace } from './service-pace.js'

export {
  type AttemptSeen,
  attemptSeen,
  type FollowEvent,
  type FollowNotice,
} from './follow-events.js'

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
  /**
   * Polls even an emulator that has an event stream, as against the service
   * (to see the pacing and its cost). Default false: the stream when there is one.
   */
  poll?: boolean
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
 * as the later one. On an emulator that has an event stream it listens to that
 * instead ({@link followLive}: each attempt and change as it happens, no call
 * counted) unless `poll` is set. Ends when `signal` aborts, rejecting with its
 * reason.
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
  if (pace.liveEvents && options.poll !== true) {
    yield* followLive(api, endpointId, { signal })
    return
  }
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

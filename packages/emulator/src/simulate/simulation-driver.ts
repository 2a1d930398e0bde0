import { performance } from 'node:perf_hooks'
import { readReceiverAnswer } from '@affiliate-webhooks/core/internal'
import type { AttemptDetail } from '../delivery/attempt-delivery.js'
import type { AttemptLogEntry, DeliveryRecord } from '../delivery/delivery-record.js'
import { disableEndpoint, type EndpointState, enableEndpoint } from '../delivery/endpoint-state.js'
import { createEngine, type EndpointRecord, type Engine } from '../delivery/engine.js'
import type { AttemptResult } from '../delivery/http-request.js'
import { ANSWER_TIMEOUT_MS, type DeliveryRules, type DeliveryStatus } from '../delivery/schedule.js'
import { describeEvent } from '../delivery/signing.js'
import { ApiError } from '../shared/api-error.js'
import { createClock } from '../shared/clock.js'

/** Attempts in flight at once, unless told otherwise. */
export const DEFAULT_CONCURRENCY = 10

/** Where and how {@link createSimulation} delivers: one endpoint, on a scaled clock. */
export interface SimulationEngineOptions extends Partial<DeliveryRules> {
  /** The receiver, or a function that picks one per attempt (a load balancer, in tests). */
  url: string | (() => string)
  /** The endpoint secret, `whsec_` prefix included; every attempt is signed afresh with it. */
  secret: string
  /** Service time runs this many times faster than real time (3600: an hour a second). Default 1. */
  timeScale?: number
  /** Real ms a receiver has to answer. Default 10 000, the spec's limit, not scaled. */
  timeoutMs?: number
  /** Attempts in flight at once. Default 10. */
  concurrency?: number
  /** Service time at the start, epoch ms. Default now. */
  startAt?: number
  /** After every attempt, with the delivery it belongs to. */
  onAttempt?: (attempt: AttemptRecord, delivery: SimulatedDelivery) => void
  /** When the endpoint is disabled or enabled. */
  onEndpointChange?: (endpoint: EndpointState) => void
}

/** One attempt in the delivery history. */
export interface AttemptRecord extends AttemptResult {
  deliveryId: string
  /** `Service-Event-Id`: the body's id. */
  eventId: string
  /** `Service-Delivery-Attempt`: 1 to 8, starting at 1 again on a replay. */
  attempt: number
  /** 0 for the first set of attempts, n for the n-th replay. */
  round: number
  /** Where it was sent. */
  url: string
  /** Service time the attempt was sent, epoch ms. */
  at: number
  /** Service time it was due: when the event occurred (or was released), or the previous attempt + the offset. */
  dueAt: number
  /** Service time of the batch that sent it (batches go out every minute). */
  batchAt: number
  /** 1 for the first attempt sent, 2 for the next, across all deliveries. */
  sequence: number
  /** The `Service-Signature` sent. */
  signature: string
}

/** A delivery of the engine with its conversion id and every attempt, replays included. */
export interface SimulatedDelivery extends DeliveryRecord {
  /** `data.conversion.id` of a conversion event. */
  readonly conversionId: number | undefined
  /** Every attempt, replays included, oldest first. */
  readonly attempts: AttemptRecord[]
}

/** Counters of a simulation so far. */
export interface SimulatorStats {
  /** Events that occurred. */
  events: number
  /** Events emitted for a later service time that has not come yet. */
  upcoming: number
  /** Events that occurred while the endpoint was disabled, so were never queued. */
  notQueued: number
  deliveries: Record<DeliveryStatus, number> & { total: number }
  attempts: { total: number; succeeded: number; failed: number }
  /** Attempts in flight now. */
  inFlight: number
  /** Replays requested. */
  replays: number
  /** Per attempt: the HTTP status, or `timeout` / `connection_error`. */
  statusCodes: Record<string, number>
  /** Per answered attempt: the receiver's `outcome` or `error.code`, when its answer says. */
  outcomes: Record<string, number>
  /** The endpoint now. */
  endpoint: EndpointState
  serviceElapsedMs: number
  realElapsedMs: number
}

const bump = (table: Record<string, number>, key: string) => {
  table[key] = (table[key] ?? 0) + 1
}

function positive(name: string, value: number): number {
  if (!(value > 0) || !Number.isFinite(value)) {
    throw new TypeError(`simulate: \`${name}\` must be a number > 0`)
  }
  return value
}

/**
 * Failed attempts in a row that disable the endpoint: a whole number >= 1, or
 * Infinity for an endpoint never disabled (a crash test under a compressed clock).
 */
function failureLimit(value: number): number {
  if (value === Number.POSITIVE_INFINITY || (Number.isInteger(value) && value >= 1)) return value
  throw new TypeError(
    'simulate: `disableAfterFailures` must be a whole number >= 1, or Infinity (never disabled)',
  )
}

/** What a simulation counts and keeps: every delivery with its attempts, and the tallies. */
class Tally {
  events = 0
  notQueued = 0
  attempts = 0
  ok = 0
  replays = 0
  readonly statusCodes: Record<string, number> = {}
  readonly outcomes: Record<string, number> = {}
  readonly all: SimulatedDelivery[] = []
  readonly byId = new Map<string, SimulatedDelivery>()

  /** A delivery just queued: kept with its conversion id and an empty attempt list. */
  queued(record: DeliveryRecord, conversionId: number | undefined): SimulatedDelivery {
    const delivery = Object.assign(record, { conversionId, attempts: [] as AttemptRecord[] })
    this.all.push(delivery)
    this.byId.set(delivery.id, delivery)
    return delivery
  }

  /** One attempt made: recorded on its delivery and counted. */
  attempt(
    entry: AttemptLogEntry,
    detail: AttemptDetail,
    delivery: SimulatedDelivery,
  ): AttemptRecord {
    const attempt: AttemptRecord = {
      ...detail.result,
      deliveryId: entry.deliveryId,
      eventId: entry.eventId,
      attempt: entry.attempt,
      round: detail.round,
      url: detail.url,
      at: entry.at,
      dueAt: entry.dueAt,
      batchAt: entry.batchAt,
      sequence: detail.sequence,
      signature: detail.signature,
    }
    delivery.attempts.push(attempt)
    this.attempts++
    if (entry.ok) this.ok++
    bump(this.statusCodes, entry.result)
    const answer = readReceiverAnswer(detail.result.responseBody)
    const said = answer.outcome ?? answer.code
    if (said !== undefined) bump(this.outcomes, said)
    return attempt
  }

  stats(
    engine: Engine,
    endpoint: EndpointState,
    elapsed: { service: number; real: number },
  ): SimulatorStats {
    const deliveries = { total: this.all.length, pending: 0, retrying: 0, succeeded: 0, failed: 0 }
    for (const delivery of this.all) deliveries[delivery.status]++
    const { upcoming, inFlight } = engine.counts()
    return {
      events: this.events,
      upcoming,
      notQueued: this.notQueued,
      deliveries,
      attempts: { total: this.attempts, succeeded: this.ok, failed: this.attempts - this.ok },
      inFlight,
      replays: this.replays,
      statusCodes: { ...this.statusCodes },
      outcomes: { ...this.outcomes },
      endpoint: { ...endpoint },
      serviceElapsedMs: elapsed.service,
      realElapsedMs: elapsed.real,
    }
  }
}

/** The engine's options for a simulation, checked. */
function engineOptions(options: SimulationEngineOptions) {
  const { url } = options
  return {
    concurrency: Math.floor(positive('concurrency', options.concurrency ?? DEFAULT_CONCURRENCY)),
    timeoutMs: positive('timeoutMs', options.timeoutMs ?? ANSWER_TIMEOUT_MS),
    ...(options.retryScheduleMs ? { retryScheduleMs: options.retryScheduleMs } : {}),
    ...(options.disableAfterFailures === undefined
      ? {}
      : { disableAfterFailures: failureLimit(options.disableAfterFailures) }),
    ...(options.batchIntervalMs === undefined ? {} : { batchIntervalMs: options.batchIntervalMs }),
    ...(typeof url === 'function' ? { targetUrl: url } : {}),
  }
}

const bodyText = (event: object | string) =>
  typeof event === 'string' ? event : JSON.stringify(event)

/**
 * The `simulate` driver of the engine: one endpoint at `url` with `secret`, a
 * clock `timeScale` times faster than real time, events that occur now or later,
 * and counters and every attempt kept for a report.
 */
export function createSimulation(options: SimulationEngineOptions) {
  if (typeof options.secret !== 'string' || options.secret === '') {
    throw new TypeError('simulate: `secret` must be a non-empty string')
  }
  const timeScale = positive('timeScale', options.timeScale ?? 1)
  const clock = createClock({ timeScale, ...(options.startAt ? { start: options.startAt } : {}) })
  const { url, onAttempt, onEndpointChange } = options
  const tally = new Tally()
  const origin = options.startAt ?? clock.now()
  const engine = createEngine({
    clock,
    origin,
    ...engineOptions(options),
    onAttempt(entry, detail, record) {
      const delivery = record as SimulatedDelivery
      // Recorded first: `onAttempt?.(...)` would skip its arguments without a callback.
      const attempt = tally.attempt(entry, detail, delivery)
      onAttempt?.(attempt, delivery)
      if (detail.disabledEndpoint) onEndpointChange?.({ ...endpoint.state })
    },
  })
  const endpoint: EndpointRecord = engine.addEndpoint({
    url: typeof url === 'string' ? url : '(several)',
    events: [],
    description: null,
    secret: options.secret,
  })
  const realStart = performance.now()

  /** The event occurs now (or at `when.at`): queued, unless the endpoint is disabled. */
  function enqueue(
    event: object | string,
    when: { at?: number; notBefore?: number },
  ): SimulatedDelivery | undefined {
    tally.events++
    // "Events that occur while disabled are not queued."
    if (endpoint.state.status === 'disabled') {
      tally.notQueued++
      return undefined
    }
    const body = bodyText(event)
    const { eventId, eventType, conversionId } = describeEvent(body)
    const record = engine.queue(endpoint, { id: eventId, type: eventType }, body, when)
    return tally.queued(record, conversionId)
  }

  return {
    engine,
    timeScale,
    /** Service time now, epoch ms. */
    now: (): number => clock.now(),
    /** The endpoint's state, live. */
    endpoint: endpoint.state as Readonly<EndpointState>,
    /** The event occurs now; undefined when the endpoint is disabled (not queued). */
    enqueue: (event: object | string, when: { notBefore?: number } = {}) => enqueue(event, when),
    /** The event occurs at `at` (service time), its first attempt not before `notBefore`. */
    emit(event: object | string, at: { at?: number; notBefore?: number } = {}): void {
      const when = at.at ?? clock.now()
      engine.occurAt(when, () => enqueue(event, { ...at, at: when }))
    },
    /** A fresh round of attempts. Throws `delivery_not_replayable` (409) or `delivery_not_found` (404). */
    replay(deliveryId: string, at: { notBefore?: number } = {}): SimulatedDelivery {
      const delivery = tally.byId.get(deliveryId)
      if (!delivery) throw new ApiError('delivery_not_found', `No delivery ${deliveryId}.`)
      engine.replay(delivery, at.notBefore)
      tally.replays++
      return delivery
    },
    /** PATCH status `disabled`. */
    disable(): void {
      if (disableEndpoint(endpoint.state, clock.now())) onEndpointChange?.({ ...endpoint.state })
    },
    /** PATCH status `active`: consecutiveFailures back to 0, deliveries resume. */
    enable(): void {
      enableEndpoint(endpoint.state)
      onEndpointChange?.({ ...endpoint.state })
      engine.changed()
    },
    get: (deliveryId: string): SimulatedDelivery | undefined => tally.byId.get(deliveryId),
    /** Every delivery, in the order they were queued. */
    deliveries: (): readonly SimulatedDelivery[] => tally.all,
    stats: (): SimulatorStats =>
      tally.stats(engine, endpoint.state, {
        service: clock.now() - origin,
        real: performance.now() - realStart,
      }),
    idle: (): Promise<void> => engine.idle(),
    close: (): Promise<void> => engine.close(),
  }
}

/** What {@link createSimulation} returns. */
export type Simulation = ReturnType<typeof createSimulation>

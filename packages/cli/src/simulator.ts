import { performance } from 'node:perf_hooks'
import {
  ANSWER_TIMEOUT_MS,
  type AttemptResult,
  activeEndpoint,
  BATCH_INTERVAL_MS,
  createAgents,
  type DeliveryProgress,
  type DeliveryStatus,
  DISABLE_AFTER_FAILURES,
  deliveryHeaders,
  describeEvent,
  disableEndpoint,
  type EndpointState,
  enableEndpoint,
  type FailedBecause,
  failDelivery,
  pendingDelivery,
  RETRY_SCHEDULE_MS,
  recordFailure,
  recordSuccess,
  SimulatorError,
  sendAttempt,
  settleAttempt,
  startReplay,
} from '@affiliate-webhooks/emulator'

export type { EndpointState }

/** Where and how {@link createDeliverySimulator} delivers. */
export interface DeliverySimulatorOptions {
  /** The receiver, or a function that picks one per attempt (a load balancer, in tests). */
  url: string | (() => string)
  /** The endpoint secret, `whsec_` prefix included; every attempt is signed afresh with it. */
  secret: string
  /**
   * Service time runs this many times faster than real time: 3600 turns the
   * schedule's hours into seconds. Default 1 (the service's own pace).
   */
  timeScale?: number
  /**
   * Real ms a receiver has to answer. Default 10 000, the spec's limit, and not
   * scaled: a real receiver must still answer within ten real seconds.
   */
  timeoutMs?: number
  /** Attempts in flight at once. Default 10. */
  concurrency?: number
  /** Offsets of attempts 2..n after the previous one, service ms. Default: the spec's seven. */
  retryScheduleMs?: readonly number[]
  /** Failed attempts in a row that disable the endpoint. Default 20. */
  disableAfterFailures?: number
  /** How often a batch of due deliveries goes out, service ms. Default one minute. */
  batchIntervalMs?: number
  /** Service time at the start, epoch ms. Default now. */
  startAt?: number
  /** Extra request headers, e.g. a User-Agent. */
  headers?: Readonly<Record<string, string>>
  /** After every attempt, with the delivery it belongs to. */
  onAttempt?: (attempt: AttemptRecord, delivery: Delivery) => void
  /** After every change of a delivery's status. */
  onDeliveryChange?: (delivery: Delivery) => void
  /** When the endpoint is disabled or enabled. */
  onEndpointChange?: (endpoint: EndpointState) => void
}

/** One attempt in the delivery history. */
export interface AttemptRecord extends AttemptResult {
  /** The delivery it belongs to. */
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
  /** Service time it was due: when the event occurred (or was released), or the previous attempt + the schedule's offset. */
  dueAt: number
  /** Service time of the batch that sent it (batches go out every minute). */
  batchAt: number
  /** 1 for the first attempt the simulator sent, 2 for the next, across all deliveries. */
  sequence: number
  /** The `Service-Signature` sent. */
  signature: string
}

/** One delivery of one event, as the service's delivery history shows it. */
export interface Delivery {
  /** `dlv_...`, the deliveryId of the service's paths. */
  readonly id: string
  /** The event's id, the same on every attempt and replay. */
  readonly eventId: string
  /** The event's type. */
  readonly eventType: string
  /** `data.conversion.id` of a conversion event. */
  readonly conversionId: number | undefined
  /** The exact body sent on every attempt. */
  readonly body: string
  /** pending, retrying, succeeded or failed. */
  readonly status: DeliveryStatus
  /** Every attempt, replays included, oldest first. */
  readonly attempts: readonly AttemptRecord[]
  /** How many times it was replayed. */
  readonly replays: number
  /** Service time of the next attempt while pending or retrying. */
  readonly nextAttemptAt: number | undefined
  /** Why a failed delivery failed. */
  readonly failedBecause: FailedBecause | undefined
}

/** Counters of a simulator so far: deliveries by status, attempts, answers, the endpoint. */
export interface SimulatorStats {
  /** Events that occurred (emitted or enqueued). */
  events: number
  /** Events emitted for a later service time that has not come yet. */
  upcoming: number
  /** Events that occurred while the endpoint was disabled, so were never queued. */
  notQueued: number
  /** Deliveries by status. */
  deliveries: Record<DeliveryStatus, number> & { total: number }
  /** Attempts made, and how they ended. */
  attempts: { total: number; succeeded: number; failed: number }
  /** Attempts in flight now. */
  inFlight: number
  /** Replays requested. */
  replays: number
  /** Per attempt: the HTTP status, or `timeout` / `connection_error` when there was no answer. */
  statusCodes: Record<string, number>
  /** Per answered attempt: the receiver's `outcome` or `error.code`, when its answer says. */
  outcomes: Record<string, number>
  /** The endpoint now. */
  endpoint: EndpointState
  /** Service time since the start, ms. */
  serviceElapsedMs: number
  /** Real time since the start, ms. */
  realElapsedMs: number
}

/** Options of {@link DeliverySimulator.enqueue} and {@link DeliverySimulator.replay}. */
export interface EnqueueOptions {
  /** Earliest service time of the first attempt (holding an event back reorders it). */
  notBefore?: number
}

/** Options of {@link DeliverySimulator.emit}: when the event occurs. */
export interface EmitOptions extends EnqueueOptions {
  /** Service time the event occurs, epoch ms. Default now. */
  at?: number
}

/** The sender side of the service, made by {@link createDeliverySimulator}. */
export interface DeliverySimulator {
  /** Service time now, epoch ms. */
  now(): number
  /** Service ms per real ms. */
  readonly timeScale: number
  /** The endpoint's state, live. */
  readonly endpoint: Readonly<EndpointState>
  /**
   * The event occurs now: the service queues a delivery, which goes out with the
   * next batch. Returns undefined when the endpoint is disabled (not queued).
   */
  enqueue(event: object | string, options?: EnqueueOptions): Delivery | undefined
  /** The event occurs at `options.at` (service time); then as {@link enqueue}. */
  emit(event: object | string, options?: EmitOptions): void
  /**
   * Resends a succeeded or failed delivery: same event id, a new set of attempts.
   * Throws `delivery_not_replayable` (pending or retrying) or `delivery_not_found`.
   */
  replay(deliveryId: string, options?: EnqueueOptions): Delivery
  /** PATCH status `disabled`: deliveries stop. */
  disable(): void
  /** PATCH status `active`: deliveries resume, consecutiveFailures back to 0. */
  enable(): void
  /** One delivery by id. */
  get(deliveryId: string): Delivery | undefined
  /** Every delivery so far, in the order they were queued. */
  deliveries(): readonly Delivery[]
  /** Counters so far. */
  stats(): SimulatorStats
  /** Resolves once no event is upcoming, no delivery is pending or retrying, and nothing is in flight. */
  idle(): Promise<void>
  /** Stops sending, waits for attempts in flight, closes connections. */
  close(): Promise<void>
}

interface DeliveryState extends DeliveryProgress {
  id: string
  eventId: string
  eventType: string
  conversionId: number | undefined
  body: string
  attempts: AttemptRecord[]
  /** Batch that took it off the queue, while ready or in flight. */
  batchAt: number
}

interface Upcoming {
  body: string
  at: number
  notBefore: number | undefined
}

/** The receiver's `outcome` or `error.code`, when its answer is this library's JSON. */
export function answerOutcome(responseBody: string | undefined): string | undefined {
  if (responseBody?.[0] !== '{') return undefined
  try {
    const answer = JSON.parse(responseBody) as { outcome?: unknown; error?: { code?: unknown } }
    if (typeof answer.outcome === 'string') return answer.outcome
    if (typeof answer.error?.code === 'string') return answer.error.code
  } catch {
    // Cut at 500 characters, or not JSON: nothing to count.
  }
  return undefined
}

const positive = (name: string, value: number) => {
  if (!(value > 0) || !Number.isFinite(value)) {
    throw new TypeError(`createDeliverySimulator: \`${name}\` must be a number > 0`)
  }
  return value
}

/**
 * The sender side of the spec's delivery rules: signed attempts (re-signed each
 * time), 2xx within the time limit or a failure, the attempt schedule with a time
 * scale, batches, delivery states, replays, and the endpoint disabled after a
 * failure streak. Records every attempt like the service's delivery history.
 */
export function createDeliverySimulator(options: DeliverySimulatorOptions): DeliverySimulator {
  if (typeof options.secret !== 'string' || options.secret === '') {
    throw new TypeError('createDeliverySimulator: `secret` must be a non-empty string')
  }
  const timeScale = positive('timeScale', options.timeScale ?? 1)
  const timeoutMs = positive('timeoutMs', options.timeoutMs ?? ANSWER_TIMEOUT_MS)
  const concurrency = Math.floor(positive('concurrency', options.concurrency ?? 10))
  const schedule = options.retryScheduleMs ?? RETRY_SCHEDULE_MS
  const disableAfter = positive(
    'disableAfterFailures',
    options.disableAfterFailures ?? DISABLE_AFTER_FAILURES,
  )
  const batchInterval = positive('batchIntervalMs', options.batchIntervalMs ?? BATCH_INTERVAL_MS)
  const pickUrl = typeof options.url === 'function' ? options.url : () => options.url as string
  const { secret, onAttempt, onDeliveryChange, onEndpointChange } = options
  const agents = createAgents(concurrency)

  const realStart = performance.now()
  const origin = options.startAt ?? Date.now()
  const now = () => Math.floor(origin + (performance.now() - realStart) * timeScale)

  const endpoint: EndpointState = activeEndpoint()
  const all: DeliveryState[] = []
  const byId = new Map<string, DeliveryState>()
  const waiting = new Set<DeliveryState>()
  const ready: DeliveryState[] = []
  const upcoming: Upcoming[] = []
  let inFlight = 0
  let sent = 0
  let closed = false
  let timer: NodeJS.Timeout | undefined
  let timerAt = Number.POSITIVE_INFINITY
  let idleWaiters: (() => void)[] = []
  let settledWaiters: (() => void)[] = []

  const counters = {
    events: 0,
    notQueued: 0,
    attempts: 0,
    attemptsOk: 0,
    replays: 0,
    statusCodes: {} as Record<string, number>,
    outcomes: {} as Record<string, number>,
  }
  const bump = (table: Record<string, number>, key: string) => {
    table[key] = (table[key] ?? 0) + 1
  }

  const changed = (delivery: DeliveryState) => onDeliveryChange?.(delivery)

  const isIdle = () =>
    upcoming.length === 0 && waiting.size === 0 && ready.length === 0 && inFlight === 0
  const checkIdle = () => {
    if (inFlight === 0 && settledWaiters.length > 0) {
      const waiters = settledWaiters
      settledWaiters = []
      for (const resolve of waiters) resolve()
    }
    if (!isIdle() || idleWaiters.length === 0) return
    const waiters = idleWaiters
    idleWaiters = []
    for (const resolve of waiters) resolve()
  }

  // Batches go out at origin + k * interval of service time.
  const batchAtOrAfter = (t: number) =>
    origin + Math.max(0, Math.ceil((t - origin) / batchInterval - 1e-9)) * batchInterval

  const arm = () => {
    if (closed) return
    let next = Number.POSITIVE_INFINITY
    for (const delivery of waiting) next = Math.min(next, delivery.nextAttemptAt as number)
    for (const event of upcoming) next = Math.min(next, event.at)
    if (next === Number.POSITIVE_INFINITY) {
      if (timer) clearTimeout(timer)
      timer = undefined
      timerAt = next
      return
    }
    const at = batchAtOrAfter(Math.max(next, now()))
    if (timer && timerAt <= at) return
    if (timer) clearTimeout(timer)
    timerAt = at
    timer = setTimeout(runBatch, Math.max(0, (at - now()) / timeScale))
  }

  const fail = (delivery: DeliveryState, because: FailedBecause) => {
    failDelivery(delivery, because)
    changed(delivery)
  }

  const queue = (
    body: string,
    occurredAt: number,
    notBefore: number | undefined,
  ): DeliveryState | undefined => {
    counters.events++
    // "Events that occur while disabled are not queued."
    if (endpoint.status === 'disabled') {
      counters.notQueued++
      return undefined
    }
    const delivery: DeliveryState = {
      id: `dlv_${(all.length + 1).toString().padStart(6, '0')}`,
      ...describeEvent(body),
      body,
      attempts: [],
      ...pendingDelivery(Math.max(occurredAt, notBefore ?? 0)),
      batchAt: 0,
    }
    all.push(delivery)
    byId.set(delivery.id, delivery)
    waiting.add(delivery)
    changed(delivery)
    return delivery
  }

  function runBatch() {
    timer = undefined
    timerAt = Number.POSITIVE_INFINITY
    if (closed) return
    const t = now()
    // The batch of the last boundary passed: it sends what was due by then. A timer
    // that fired late (high time scales) thus never sends anything before its time.
    const batchAt = origin + Math.floor((t - origin) / batchInterval) * batchInterval
    const occurred = upcoming.filter((event) => event.at <= t).sort((a, b) => a.at - b.at)
    for (const event of occurred) {
      upcoming.splice(upcoming.indexOf(event), 1)
      queue(event.body, event.at, event.notBefore)
    }
    const due = [...waiting].filter((d) => (d.nextAttemptAt as number) <= batchAt)
    due.sort((a, b) => (a.nextAttemptAt as number) - (b.nextAttemptAt as number))
    for (const delivery of due) {
      waiting.delete(delivery)
      // "Deliveries still queued are marked failed as they come due."
      if (endpoint.status === 'disabled') fail(delivery, 'endpoint_disabled')
      else {
        delivery.batchAt = batchAt
        ready.push(delivery)
      }
    }
    pump()
    arm()
    checkIdle()
  }

  function pump() {
    while (!closed && inFlight < concurrency && ready.length > 0) {
      const delivery = ready.shift() as DeliveryState
      if (endpoint.status === 'disabled') {
        fail(delivery, 'endpoint_disabled')
        continue
      }
      inFlight++
      attempt(delivery).then(
        () => {
          inFlight--
          pump()
          arm()
          checkIdle()
        },
        (error: unknown) => {
          // Only a throwing callback gets here; keep the simulator consistent and report it.
          inFlight--
          checkIdle()
          process.nextTick(() => {
            throw error
          })
        },
      )
    }
  }

  async function attempt(delivery: DeliveryState) {
    delivery.made++
    const number = delivery.made
    const dueAt = delivery.nextAttemptAt as number
    const at = now()
    const sequence = ++sent
    const url = pickUrl()
    // Signed at the moment of sending, so a retry carries a fresh timestamp.
    const headers = await deliveryHeaders({
      secret,
      body: delivery.body,
      attempt: number,
      eventId: delivery.eventId,
      ...(options.headers ? { extra: options.headers } : {}),
    })
    const signature = headers['Service-Signature'] as string
    const result = await sendAttempt({
      url,
      headers,
      body: delivery.body,
      timeoutMs,
      agents,
    })
    const record: AttemptRecord = {
      deliveryId: delivery.id,
      eventId: delivery.eventId,
      attempt: number,
      round: delivery.replays,
      url,
      at,
      dueAt,
      batchAt: delivery.batchAt,
      sequence,
      signature,
      ...result,
    }
    delivery.attempts.push(record)
    counters.attempts++
    bump(
      counters.statusCodes,
      result.responseStatus !== undefined && result.errorKind === undefined
        ? String(result.responseStatus)
        : (result.errorKind ?? 'connection_error'),
    )
    const outcome = answerOutcome(result.responseBody)
    if (outcome !== undefined) bump(counters.outcomes, outcome)
    const ended = now()
    let disabledNow = false
    if (result.ok) {
      counters.attemptsOk++
      recordSuccess(endpoint, ended)
    } else {
      disabledNow = recordFailure(endpoint, ended, disableAfter)
    }
    settleAttempt(delivery, result.ok, at, schedule)
    if (delivery.status === 'retrying') waiting.add(delivery)
    onAttempt?.(record, delivery)
    changed(delivery)
    if (disabledNow) onEndpointChange?.({ ...endpoint })
  }

  const bodyOf = (event: object | string) =>
    typeof event === 'string' ? event : JSON.stringify(event)

  return {
    now,
    timeScale,
    endpoint,
    enqueue(event, enqueueOptions = {}) {
      const delivery = queue(bodyOf(event), now(), enqueueOptions.notBefore)
      arm()
      return delivery
    },
    emit(event, emitOptions = {}) {
      const at = emitOptions.at ?? now()
      upcoming.push({ body: bodyOf(event), at, notBefore: emitOptions.notBefore })
      arm()
    },
    replay(deliveryId, replayOptions = {}) {
      const delivery = byId.get(deliveryId)
      if (!delivery) {
        throw new SimulatorError('delivery_not_found', `No delivery ${deliveryId}.`)
      }
      startReplay(delivery, Math.max(now(), replayOptions.notBefore ?? 0))
      counters.replays++
      waiting.add(delivery)
      changed(delivery)
      arm()
      return delivery
    },
    disable() {
      if (disableEndpoint(endpoint, now())) onEndpointChange?.({ ...endpoint })
    },
    enable() {
      enableEndpoint(endpoint)
      onEndpointChange?.({ ...endpoint })
      arm()
    },
    get: (deliveryId) => byId.get(deliveryId),
    deliveries: () => all,
    stats() {
      const deliveries = { total: all.length, pending: 0, retrying: 0, succeeded: 0, failed: 0 }
      for (const delivery of all) deliveries[delivery.status]++
      return {
        events: counters.events,
        upcoming: upcoming.length,
        notQueued: counters.notQueued,
        deliveries,
        attempts: {
          total: counters.attempts,
          succeeded: counters.attemptsOk,
          failed: counters.attempts - counters.attemptsOk,
        },
        inFlight,
        replays: counters.replays,
        statusCodes: { ...counters.statusCodes },
        outcomes: { ...counters.outcomes },
        endpoint: { ...endpoint },
        serviceElapsedMs: now() - origin,
        realElapsedMs: performance.now() - realStart,
      }
    },
    idle() {
      if (isIdle()) return Promise.resolve()
      return new Promise((resolve) => idleWaiters.push(resolve))
    },
    async close() {
      closed = true
      if (timer) clearTimeout(timer)
      timer = undefined
      if (inFlight > 0) await new Promise<void>((resolve) => settledWaiters.push(resolve))
      agents.destroy()
      for (const resolve of idleWaiters) resolve()
      idleWaiters = []
    },
  }
}

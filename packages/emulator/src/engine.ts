import { type Agents, createAgents, sendAttempt } from './attempt.js'
import type { Clock } from './clock.js'
import {
  type DeliveryProgress,
  failDelivery,
  isQueued,
  pendingDelivery,
  settleAttempt,
  startReplay,
} from './delivery-record.js'
import {
  activeEndpoint,
  type EndpointState,
  recordFailure,
  recordSuccess,
} from './endpoint-state.js'
import { newId } from './ids.js'
import { ANSWER_TIMEOUT_MS, MAX_ATTEMPTS } from './schedule.js'
import { deliveryHeaders } from './signing.js'
import type { ConversionInput } from './validation.js'

/** A registered endpoint, secret included (never sent back but on create and rotate). */
export interface WebhookEndpoint {
  id: string
  url: string
  events: string[]
  description: string | null
  secret: string
  /** Service time of registration, epoch ms. */
  createdAt: number
  /** Status, failure streak, disabledAt, lastDeliveryAt. */
  state: EndpointState
}

/** One delivery of one event to one endpoint, as the delivery history shows it. */
export interface DeliveryRecord extends DeliveryProgress {
  id: string
  webhookId: string
  eventId: string
  eventType: string
  /** The exact body of every attempt. */
  body: string
  /** Service time it was queued, epoch ms. */
  createdAt: number
  /** Attempts made in all rounds. */
  attemptsTotal: number
  /** Of the last attempt: HTTP status, first 500 characters, duration, and why there was no answer. */
  responseStatus: number | null
  responseBody: string | null
  durationMs: number | null
  errorMessage: string | null
}

/** One attempt, as `GET /emulator/log` and the terminal show it. */
export interface AttemptLogEntry {
  /** Service time the attempt was sent, epoch ms. */
  at: number
  webhookId: string
  deliveryId: string
  eventId: string
  eventType: string
  /** 1 to 8 within its round. */
  attempt: number
  /** 2xx within the time limit. */
  ok: boolean
  /** The answer's HTTP status, null when there was none. */
  responseStatus: number | null
  /** The HTTP status as text, or `timeout` / `connection_error`. */
  result: string
  durationMs: number
  errorMessage: string | null
}

/** Everything the engine keeps, as the state file holds it. */
export interface EngineSnapshot {
  /** Service time when it was taken. */
  now: number
  endpoints: WebhookEndpoint[]
  deliveries: DeliveryRecord[]
  conversions: ConversionInput[]
  log: AttemptLogEntry[]
}

/** Options of {@link createEngine}. */
export interface EngineOptions {
  clock: Clock
  /** Real ms a receiver has to answer. Default 10 000. */
  timeoutMs?: number
  /** Attempts in flight at once while the clock runs on its own. Default 50. */
  concurrency?: number
  /** After every attempt. */
  onAttempt?: (entry: AttemptLogEntry) => void
  /** After every change of state (to write the state file). */
  onChange?: () => void
  /** State to start from. */
  initial?: EngineSnapshot
}

/** What a conversion sent to `POST /emulator/conversions` set off. */
export interface EmitResult {
  /** The event emitted, or null when the status did not change. */
  event: { id: string; type: string } | null
  deliveries: DeliveryRecord[]
}

const byDue = (a: DeliveryRecord, b: DeliveryRecord) =>
  (a.nextAttemptAt as number) - (b.nextAttemptAt as number)

/**
 * The delivery engine: endpoints and their state, delivery records, the queue
 * and the attempts. Attempts go out when due by the clock (scaled real time),
 * or in order, one after another, while {@link Engine.advance} moves the clock.
 */
export function createEngine(options: EngineOptions) {
  const { clock, onAttempt } = options
  const onChange = options.onChange ?? (() => {})
  const timeoutMs = options.timeoutMs ?? ANSWER_TIMEOUT_MS
  const concurrency = options.concurrency ?? 50
  const agents: Agents = createAgents(concurrency)

  const endpoints = new Map<string, WebhookEndpoint>()
  const deliveries = new Map<string, DeliveryRecord>()
  const conversions = new Map<number, ConversionInput>()
  const log: AttemptLogEntry[] = []
  for (const endpoint of options.initial?.endpoints ?? []) endpoints.set(endpoint.id, endpoint)
  for (const delivery of options.initial?.deliveries ?? []) deliveries.set(delivery.id, delivery)
  for (const conversion of options.initial?.conversions ?? []) {
    conversions.set(conversion.id, conversion)
  }
  log.push(...(options.initial?.log ?? []))

  /** Queued, not yet due (or not yet looked at). */
  const waiting = new Set<DeliveryRecord>()
  /** Due, waiting for a free slot, oldest due first. */
  const ready: DeliveryRecord[] = []
  const inFlight = new Map<string, Promise<void>>()
  for (const delivery of deliveries.values()) if (isQueued(delivery)) waiting.add(delivery)

  let closed = false
  let advancing = 0
  let timer: NodeJS.Timeout | undefined
  let pumpSoon = false
  let advanceChain: Promise<unknown> = Promise.resolve()

  async function attempt(delivery: DeliveryRecord): Promise<void> {
    const endpoint = endpoints.get(delivery.webhookId)
    if (!endpoint || !deliveries.has(delivery.id)) return
    // "Deliveries still queued are marked failed as they come due."
    if (endpoint.state.status === 'disabled') {
      failDelivery(delivery, 'endpoint_disabled')
      onChange()
      return
    }
    delivery.made++
    delivery.attemptsTotal++
    const number = delivery.made
    const at = clock.now()
    // Signed now, with the secret of now: a rotation applies to queued deliveries at once.
    const headers = await deliveryHeaders({
      secret: endpoint.secret,
      body: delivery.body,
      attempt: number,
      eventId: delivery.eventId,
    })
    const result = await sendAttempt({
      url: endpoint.url,
      headers,
      body: delivery.body,
      timeoutMs,
      agents,
    })
    if (closed || !deliveries.has(delivery.id)) return
    const ended = clock.now()
    if (result.ok) recordSuccess(endpoint.state, ended)
    else recordFailure(endpoint.state, ended)
    settleAttempt(delivery, result.ok, at)
    if (delivery.status === 'retrying') waiting.add(delivery)
    delivery.responseStatus = result.responseStatus ?? null
    delivery.responseBody = result.responseBody ?? null
    delivery.durationMs = Math.round(result.durationMs)
    delivery.errorMessage = result.errorMessage ?? null
    const entry: AttemptLogEntry = {
      at,
      webhookId: endpoint.id,
      deliveryId: delivery.id,
      eventId: delivery.eventId,
      eventType: delivery.eventType,
      attempt: number,
      ok: result.ok,
      responseStatus: result.responseStatus ?? null,
      result:
        result.errorKind ??
        (result.responseStatus === undefined ? 'connection_error' : String(result.responseStatus)),
      durationMs: delivery.durationMs,
      errorMessage: delivery.errorMessage,
    }
    log.push(entry)
    onChange()
    onAttempt?.(entry)
  }

  function start(delivery: DeliveryRecord): Promise<void> {
    const running = attempt(delivery).finally(() => {
      inFlight.delete(delivery.id)
      if (advancing) return
      drain()
      // A retry was just scheduled; a delivery waiting for its time keeps the timer.
      if (delivery.status === 'retrying') arm()
    })
    inFlight.set(delivery.id, running)
    return running
  }

  function drain() {
    while (!closed && !advancing && inFlight.size < concurrency && ready.length > 0) {
      // Only writing the state file can throw here; the engine carries on.
      start(ready.shift() as DeliveryRecord).catch((error: unknown) =>
        process.emitWarning(`emulator: ${String(error)}`),
      )
    }
  }

  function arm() {
    if (timer) clearTimeout(timer)
    timer = undefined
    if (closed || advancing) return
    let next = Number.POSITIVE_INFINITY
    for (const delivery of waiting) next = Math.min(next, delivery.nextAttemptAt as number)
    if (next === Number.POSITIVE_INFINITY) return
    // setTimeout takes at most 2^31-1 ms; a later time is re-armed when this fires.
    timer = setTimeout(pump, Math.min(clock.realDelay(next), 2 ** 31 - 1))
    timer.unref()
  }

  /** Moves what is due from waiting to ready, starts what fits, arms the timer for the rest. */
  function pump() {
    pumpSoon = false
    if (closed || advancing) return
    const now = clock.now()
    const due: DeliveryRecord[] = []
    for (const delivery of waiting) {
      if ((delivery.nextAttemptAt as number) <= now) {
        waiting.delete(delivery)
        due.push(delivery)
      }
    }
    ready.push(...due.sort(byDue))
    drain()
    arm()
  }

  function schedule(delivery: DeliveryRecord) {
    waiting.add(delivery)
    if (!pumpSoon) {
      pumpSoon = true
      setImmediate(pump)
    }
  }

  function queue(endpoint: WebhookEndpoint, event: { id: string; type: string }, body: string) {
    const now = clock.now()
    const delivery: DeliveryRecord = {
      id: newId.delivery(),
      webhookId: endpoint.id,
      eventId: event.id,
      eventType: event.type,
      body,
      createdAt: now,
      ...pendingDelivery(now),
      attemptsTotal: 0,
      responseStatus: null,
      responseBody: null,
      durationMs: null,
      errorMessage: null,
    }
    deliveries.set(delivery.id, delivery)
    schedule(delivery)
    return delivery
  }

  function dropDeliveries(webhookId: string) {
    for (const delivery of deliveries.values()) {
      if (delivery.webhookId !== webhookId) continue
      deliveries.delete(delivery.id)
      waiting.delete(delivery)
      const index = ready.indexOf(delivery)
      if (index !== -1) ready.splice(index, 1)
    }
  }

  /** Runs every attempt due by `target`, in order, moving the clock to each due time. */
  async function runUntil(target: number): Promise<number> {
    let made = 0
    for (;;) {
      if (inFlight.size > 0) {
        await Promise.all(inFlight.values())
        continue
      }
      let next = Number.POSITIVE_INFINITY
      for (const delivery of [...ready, ...waiting]) {
        next = Math.min(next, delivery.nextAttemptAt as number)
      }
      if (next > target) break
      clock.advanceTo(next)
      const now = clock.now()
      const due = ready.splice(0)
      for (const delivery of waiting) {
        if ((delivery.nextAttemptAt as number) <= now) {
          waiting.delete(delivery)
          due.push(delivery)
        }
      }
      for (const delivery of due.sort(byDue)) {
        const before = log.length
        await start(delivery)
        made += log.length - before
      }
    }
    clock.advanceTo(target)
    return made
  }

  const conversionEvent = (type: string, conversion: ConversionInput) => ({
    id: newId.event(),
    type,
    createdAt: new Date(clock.now()).toISOString(),
    data: { conversion },
  })

  return {
    clock,
    /** Every endpoint, newest first. */
    endpoints: (): WebhookEndpoint[] => [...endpoints.values()].reverse(),
    endpoint: (id: string) => endpoints.get(id),
    addEndpoint(input: { url: string; events: string[]; description: string | null }) {
      const endpoint: WebhookEndpoint = {
        id: newId.webhook(),
        ...input,
        secret: newId.secret(),
        createdAt: clock.now(),
        state: activeEndpoint(),
      }
      endpoints.set(endpoint.id, endpoint)
      onChange()
      return endpoint
    },
    /** After a change made to an endpoint in place. */
    changed() {
      onChange()
      pump()
    },
    deleteEndpoint(id: string) {
      endpoints.delete(id)
      dropDeliveries(id)
      onChange()
    },
    rotateSecret(endpoint: WebhookEndpoint): string {
      endpoint.secret = newId.secret()
      onChange()
      return endpoint.secret
    },
    /** `webhook.test` for one endpoint, whatever it subscribes to. */
    sendTest(endpoint: WebhookEndpoint): DeliveryRecord {
      const event = {
        id: newId.event(),
        type: 'webhook.test',
        createdAt: new Date(clock.now()).toISOString(),
        data: { webhookId: endpoint.id },
      }
      const delivery = queue(endpoint, event, JSON.stringify(event))
      onChange()
      return delivery
    },
    /** The endpoint's deliveries, newest first. */
    deliveriesOf(webhookId: string): DeliveryRecord[] {
      const list: DeliveryRecord[] = []
      for (const delivery of deliveries.values()) {
        if (delivery.webhookId === webhookId) list.push(delivery)
      }
      return list.reverse()
    },
    delivery(webhookId: string, id: string): DeliveryRecord | undefined {
      const delivery = deliveries.get(id)
      return delivery?.webhookId === webhookId ? delivery : undefined
    },
    /** Throws `delivery_not_replayable` (a SimulatorError) while it is queued. */
    replay(delivery: DeliveryRecord) {
      startReplay(delivery, clock.now())
      schedule(delivery)
      onChange()
    },
    /** created for a new id, updated for a new status, nothing for the same status. */
    emitConversion(conversion: ConversionInput): EmitResult {
      const known = conversions.get(conversion.id)
      conversions.set(conversion.id, conversion)
      const type = !known
        ? 'conversion.created'
        : known.status !== conversion.status
          ? 'conversion.updated'
          : undefined
      if (!type) {
        onChange()
        return { event: null, deliveries: [] }
      }
      const event = conversionEvent(type, conversion)
      const body = JSON.stringify(event)
      const queued: DeliveryRecord[] = []
      // "Events that occur while disabled are not queued."
      for (const endpoint of endpoints.values()) {
        if (endpoint.state.status === 'active' && endpoint.events.includes(type)) {
          queued.push(queue(endpoint, event, body))
        }
      }
      onChange()
      return { event: { id: event.id, type }, deliveries: queued }
    },
    /** Moves the clock by `ms`, running every attempt that comes due, in order; resolves after the last. */
    advance(ms: number): Promise<{ attempts: number; now: number }> {
      const run = advanceChain.then(async () => {
        advancing++
        if (timer) clearTimeout(timer)
        try {
          const attempts = await runUntil(clock.now() + ms)
          return { attempts, now: clock.now() }
        } finally {
          advancing--
          onChange()
          pump()
        }
      })
      advanceChain = run.catch(() => {})
      return run
    },
    log: (): readonly AttemptLogEntry[] => log,
    snapshot: (): EngineSnapshot => ({
      now: clock.now(),
      endpoints: [...endpoints.values()],
      deliveries: [...deliveries.values()],
      conversions: [...conversions.values()],
      log,
    }),
    /** Stops sending, waits for attempts in flight, closes connections. */
    async close() {
      closed = true
      if (timer) clearTimeout(timer)
      await Promise.allSettled(inFlight.values())
      agents.destroy()
    },
  }
}

/** What {@link createEngine} returns. */
export type Engine = ReturnType<typeof createEngine>

/** Attempts per round, for the terminal's `attempt n/8`. */
export const ATTEMPTS_PER_ROUND = MAX_ATTEMPTS

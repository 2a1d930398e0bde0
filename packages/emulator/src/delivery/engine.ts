import type { Clock } from '../shared/clock.js'
import { newId } from '../shared/ids.js'
import type { ConversionRecord } from '../shared/records.js'
import {
  type AttemptContext,
  type AttemptDetail,
  type AttemptTarget,
  attemptDelivery,
} from './attempt-delivery.js'
import {
  type AttemptLogEntry,
  type DeliveryRecord,
  failDelivery,
  isQueued,
  newDeliveryRecord,
  startReplay,
} from './delivery-record.js'
import { activeEndpoint, type EndpointState } from './endpoint-state.js'
import { FailureLimitGate } from './failure-limit-gate.js'
import { type Agents, createAgents } from './http-request.js'
import { Pump } from './pump.js'
import { ANSWER_TIMEOUT_MS, type DeliveryRules, SPEC_RULES } from './schedule.js'
import { conversionEvent, conversionEventType, signableStamp, testEvent } from './service-events.js'

export type { AttemptLogEntry, DeliveryRecord }

/** A registered endpoint, secret included (never sent back but on create and rotate). */
export interface EndpointRecord extends AttemptTarget {
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

/** Everything the engine keeps, as the state file holds it. */
export interface EngineSnapshot {
  /** Service time when it was taken. */
  now: number
  endpoints: EndpointRecord[]
  deliveries: DeliveryRecord[]
  conversions: ConversionRecord[]
  log: AttemptLogEntry[]
}

/** Options of the engine (`new Engine(options)`, `createEngine` on the internal entry). */
export interface EngineOptions extends Partial<DeliveryRules> {
  clock: Clock
  /** A service time a batch goes out at; the others follow every batch interval. Default 0: on the clock's whole minutes. */
  origin?: number
  /** Real ms a receiver has to answer. Default 10 000, the spec's limit, never scaled. */
  timeoutMs?: number
  /** Attempts in flight at once while the clock runs on its own. Default 50. */
  concurrency?: number
  /** Where each attempt goes; default the endpoint's URL (a load balancer, in tests). */
  targetUrl?: (endpoint: AttemptTarget) => string
  /** Extra request headers on every attempt. */
  headers?: Readonly<Record<string, string>>
  /** After every attempt. */
  onAttempt?: (entry: AttemptLogEntry, detail: AttemptDetail, delivery: DeliveryRecord) => void
  /** After every change of state (to write the state file). */
  onChange?: () => void
  /** When an attempt's callback (or `onChange`) throws. Default: thrown again, uncaught. */
  onError?: (error: unknown) => void
  /** State to start from. */
  initial?: EngineSnapshot
}

/** What {@link Engine.watch} hears: an attempt made, or any other change of state. */
export type EngineEvent =
  | { kind: 'attempt'; entry: AttemptLogEntry; detail: AttemptDetail; delivery: DeliveryRecord }
  | { kind: 'change' }

/** What a conversion sent to `POST /emulator/conversions` set off. */
export interface EmitOutcome {
  /** The event emitted, or null when the status did not change. */
  event: { id: string; type: string } | null
  deliveries: DeliveryRecord[]
}

const rethrow = (error: unknown) =>
  process.nextTick(() => {
    throw error
  })

/**
 * The delivery engine both `emulator` and `simulate` drive: endpoints and their
 * state, delivery records, and the one delivery loop (`Pump`), which sends
 * in minute batches when due by the clock, or in order while {@link Engine.advance}
 * moves the clock.
 */
export class Engine {
  readonly clock: Clock
  readonly rules: DeliveryRules
  /** A service time a batch goes out at; the others follow every `rules.batchIntervalMs`. */
  readonly origin: number
  private readonly endpointMap = new Map<string, EndpointRecord>()
  private readonly deliveryMap = new Map<string, DeliveryRecord>()
  private readonly conversions = new Map<number, ConversionRecord>()
  private readonly attemptLog: AttemptLogEntry[] = []
  private readonly pump: Pump<DeliveryRecord>
  private readonly agents: Agents
  private readonly context: AttemptContext
  private readonly onChange: () => void
  private readonly watchers = new Set<(event: EngineEvent) => void>()
  private closed = false
  private sent = 0
  /** Attempts out to each endpoint: the failure limit counts them. */
  private readonly gate: FailureLimitGate

  constructor(private readonly options: EngineOptions) {
    const { clock, initial } = options
    this.clock = clock
    this.origin = options.origin ?? 0
    this.rules = {
      retryScheduleMs: options.retryScheduleMs ?? SPEC_RULES.retryScheduleMs,
      disableAfterFailures: options.disableAfterFailures ?? SPEC_RULES.disableAfterFailures,
      batchIntervalMs: options.batchIntervalMs ?? SPEC_RULES.batchIntervalMs,
    }
    this.gate = new FailureLimitGate(this.rules)
    const onChange = options.onChange ?? (() => {})
    this.onChange = () => {
      onChange()
      this.notify({ kind: 'change' })
    }
    const concurrency = options.concurrency ?? 50
    this.agents = createAgents(concurrency)
    this.context = {
      clock,
      rules: this.rules,
      timeoutMs: options.timeoutMs ?? ANSWER_TIMEOUT_MS,
      agents: this.agents,
      headers: options.headers,
      targetUrl: options.targetUrl,
      live: (delivery) => !this.closed && this.deliveryMap.has(delivery.id),
    }
    this.pump = new Pump<DeliveryRecord>({
      clock,
      origin: this.origin,
      batchIntervalMs: this.rules.batchIntervalMs,
      concurrency,
      attempt: (delivery, batchAt) => this.attempt(delivery, batchAt),
      onError: options.onError ?? rethrow,
    })
    for (const endpoint of initial?.endpoints ?? []) this.endpointMap.set(endpoint.id, endpoint)
    for (const conversion of initial?.conversions ?? []) {
      this.conversions.set(conversion.id, conversion)
    }
    this.attemptLog.push(...(initial?.log ?? []))
    for (const delivery of initial?.deliveries ?? []) {
      this.deliveryMap.set(delivery.id, delivery)
      if (isQueued(delivery)) this.pump.add(delivery)
    }
  }

  /** Every endpoint, newest first. */
  endpoints(): EndpointRecord[] {
    return [...this.endpointMap.values()].reverse()
  }

  endpoint(id: string): EndpointRecord | undefined {
    return this.endpointMap.get(id)
  }

  /** Registers an endpoint; a new secret unless one is given. */
  addEndpoint(input: {
    url: string
    events: string[]
    description: string | null
    secret?: string
  }): EndpointRecord {
    const endpoint: EndpointRecord = {
      id: newId.webhook(),
      url: input.url,
      events: input.events,
      description: input.description,
      secret: input.secret ?? newId.secret(),
      createdAt: this.clock.now(),
      state: activeEndpoint(),
    }
    this.endpointMap.set(endpoint.id, endpoint)
    this.onChange()
    return endpoint
  }

  /** After a change made to an endpoint in place (disabled, enabled, new URL). */
  changed(): void {
    this.onChange()
    this.pump.poke()
  }

  deleteEndpoint(id: string): void {
    this.endpointMap.delete(id)
    for (const delivery of this.deliveryMap.values()) {
      if (delivery.webhookId !== id) continue
      this.deliveryMap.delete(delivery.id)
      this.pump.remove(delivery)
    }
    this.onChange()
  }

  rotateSecret(endpoint: EndpointRecord): string {
    endpoint.secret = newId.secret()
    this.onChange()
    return endpoint.secret
  }

  /**
   * Queues a delivery of one event to one endpoint, which occurred at `when.at`
   * (default now); its first attempt is due then, or at `when.notBefore` (an
   * event held back arrives after newer ones).
   */
  queue(
    endpoint: EndpointRecord,
    event: { id: string; type: string },
    body: string,
    when: { at?: number | undefined; notBefore?: number | undefined } = {},
  ): DeliveryRecord {
    const delivery = newDeliveryRecord({
      id: newId.delivery(),
      webhookId: endpoint.id,
      event,
      body,
      now: when.at ?? this.clock.now(),
      notBefore: when.notBefore,
    })
    this.deliveryMap.set(delivery.id, delivery)
    this.pump.add(delivery)
    this.onChange()
    return delivery
  }

  /** Runs `occur` when service time reaches `at`, in order with the batches. */
  occurAt(at: number, occur: () => void): void {
    this.pump.occurAt(at, occur)
  }

  /** `webhook.test` for one endpoint, whatever it subscribes to. */
  sendTest(endpoint: EndpointRecord): DeliveryRecord {
    const event = testEvent(endpoint.id, signableStamp())
    return this.queue(endpoint, event, JSON.stringify(event))
  }

  /** The endpoint's deliveries, newest first. */
  deliveriesOf(webhookId: string): DeliveryRecord[] {
    const list: DeliveryRecord[] = []
    for (const delivery of this.deliveryMap.values()) {
      if (delivery.webhookId === webhookId) list.push(delivery)
    }
    return list.reverse()
  }

  delivery(webhookId: string, id: string): DeliveryRecord | undefined {
    const delivery = this.deliveryMap.get(id)
    return delivery?.webhookId === webhookId ? delivery : undefined
  }

  /** A fresh round of attempts, the first due now (or at `notBefore`). Throws `delivery_not_replayable` (an ApiError, 409) while it is queued. */
  replay(delivery: DeliveryRecord, notBefore?: number): void {
    startReplay(delivery, Math.max(this.clock.now(), notBefore ?? 0))
    this.pump.add(delivery)
    this.onChange()
  }

  /** The conversion's values as last emitted, or undefined for an id never seen. */
  conversion(id: number): ConversionRecord | undefined {
    return this.conversions.get(id)
  }

  /** created for a new id, updated for a new status, nothing for the same status. */
  emitConversion(conversion: ConversionRecord): EmitOutcome {
    const known = this.conversions.get(conversion.id)
    this.conversions.set(conversion.id, conversion)
    const type = conversionEventType(known, conversion)
    if (!type) {
      this.onChange()
      return { event: null, deliveries: [] }
    }
    const event = conversionEvent(type, conversion, signableStamp())
    const body = JSON.stringify(event)
    const queued: DeliveryRecord[] = []
    // "Events that occur while disabled are not queued."
    for (const endpoint of this.endpointMap.values()) {
      if (endpoint.state.status === 'active' && endpoint.events.includes(type)) {
        queued.push(this.queue(endpoint, event, body))
      }
    }
    this.onChange()
    return { event: { id: event.id, type }, deliveries: queued }
  }

  /** Moves the clock by `ms`, running every attempt that comes due, in order; resolves after the last. */
  async advance(ms: number): Promise<{ attempts: number; now: number }> {
    const before = this.attemptLog.length
    await this.pump.advance(ms, this.onChange)
    return { attempts: this.attemptLog.length - before, now: this.clock.now() }
  }

  /** Resolves once nothing is upcoming, queued or in flight. */
  idle(): Promise<void> {
    return this.pump.idle()
  }

  /** Events still to occur, attempts in flight. */
  counts(): { upcoming: number; inFlight: number } {
    return this.pump.counts()
  }

  /** Every delivery of every endpoint, newest first. */
  deliveries(): DeliveryRecord[] {
    return [...this.deliveryMap.values()].reverse()
  }

  /** Calls `listener` after every attempt and every change (the console's live view); returns the unsubscribe. */
  watch(listener: (event: EngineEvent) => void): () => void {
    this.watchers.add(listener)
    return () => {
      this.watchers.delete(listener)
    }
  }

  log(): readonly AttemptLogEntry[] {
    return this.attemptLog
  }

  snapshot(): EngineSnapshot {
    return {
      now: this.clock.now(),
      endpoints: [...this.endpointMap.values()],
      deliveries: [...this.deliveryMap.values()],
      conversions: [...this.conversions.values()],
      log: this.attemptLog,
    }
  }

  /** Stops sending, waits for attempts in flight, closes connections. */
  async close(): Promise<void> {
    this.closed = true
    await this.pump.close()
    this.agents.destroy()
  }

  private async attempt(delivery: DeliveryRecord, batchAt: number): Promise<void> {
    const endpoint = this.endpointMap.get(delivery.webhookId)
    if (!endpoint || !this.deliveryMap.has(delivery.id)) return
    const release = await this.gate.take(endpoint)
    // "Deliveries still queued are marked failed as they come due."
    if (endpoint.state.status === 'disabled') {
      release()
      failDelivery(delivery, 'endpoint_disabled')
      this.onChange()
      return
    }
    const sequence = ++this.sent
    const sending = attemptDelivery(this.context, endpoint, delivery, batchAt, sequence)
    const made = await sending.finally(release)
    if (!made) return
    if (isQueued(delivery)) this.pump.add(delivery)
    this.attemptLog.push(made.entry)
    this.onChange()
    this.options.onAttempt?.(made.entry, made.detail, delivery)
    this.notify({ kind: 'attempt', entry: made.entry, detail: made.detail, delivery })
  }

  private notify(event: EngineEvent): void {
    for (const watcher of this.watchers) {
      try {
        watcher(event)
      } catch (error) {
        ;(this.options.onError ?? rethrow)(error)
      }
    }
  }
}

/** The delivery engine; see {@link Engine}. */
export const createEngine = (options: EngineOptions): Engine => new Engine(options)

import type * as OtelApi from '@opentelemetry/api'
import type {
  Attributes,
  Context,
  Counter,
  Histogram,
  Meter,
  Span,
  Tracer,
} from '@opentelemetry/api'
import type { AnyWebhookEvent } from '../events/event-types.js'
import type { ReceiveResult } from '../http/answer.js'
import type { VerifiedDelivery } from '../signature/verify.js'
import { isPromiseLike } from '../store/event-store.js'

type Api = typeof OtelApi

/** Instrumentation scope of every span and metric: the package's name. */
export const INSTRUMENTATION_NAME = '@affiliate-webhooks/core'

/** Names of the spans, metrics and attributes, as the README documents them. */
export const TELEMETRY_NAMES = {
  deliverySpan: 'affiliate_webhook.receive',
  handlerSpan: 'affiliate_webhook.handler',
  deliveries: 'affiliate_webhook.deliveries',
  receiveDuration: 'affiliate_webhook.receive.duration',
  handlerDuration: 'affiliate_webhook.handler.duration',
  failureStreak: 'affiliate_webhook.failure_streak',
} as const

const ATTR = {
  system: 'messaging.system',
  operationType: 'messaging.operation.type',
  operationName: 'messaging.operation.name',
  messageId: 'messaging.message.id',
  eventType: 'affiliate_webhook.event.type',
  attempt: 'affiliate_webhook.delivery.attempt',
  conversionId: 'affiliate_webhook.conversion.id',
  outcome: 'affiliate_webhook.outcome',
  status: 'affiliate_webhook.response.status_code',
  errorType: 'error.type',
} as const

/** Durations of a delivery are mostly well under a millisecond; seconds, as the conventions ask. */
const DURATION_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
]

/**
 * The `@opentelemetry/api` module, whether imported as ESM (namespace) or CJS
 * (`default`); undefined for anything else.
 */
export function otelApiOf(module: unknown): Api | undefined {
  const m = module as (Api & { default?: Api }) | undefined
  if (typeof m?.trace?.getTracer === 'function') return m
  if (typeof m?.default?.trace?.getTracer === 'function') return m.default
  return undefined
}

/**
 * One failure-streak gauge per meter, whatever the number of receivers: it
 * reports the longest streak among the receivers alive, so a second receiver in
 * the process (another route) cannot hide the first one's streak, and a
 * receiver no longer used is not kept alive by the gauge.
 */
// Kept on globalThis under a registered symbol, like the error's brand: the CommonJS
// builds of the main and the internal entry each carry their own copy of this module.
const GAUGES = Symbol.for('affiliate-webhooks.failureStreakGauges')
type StreakGauges = WeakMap<Meter, Set<WeakRef<{ streak: number }>>>
const held = globalThis as Record<symbol, StreakGauges | undefined>
const streakGauges: StreakGauges = held[GAUGES] ?? new WeakMap()
held[GAUGES] = streakGauges
function streakGaugeOf(meter: Meter): Set<WeakRef<{ streak: number }>> {
  let holders = streakGauges.get(meter)
  if (holders !== undefined) return holders
  const live = new Set<WeakRef<{ streak: number }>>()
  holders = live
  streakGauges.set(meter, live)
  meter
    .createObservableGauge(TELEMETRY_NAMES.failureStreak, {
      description:
        'Answers in a row that were not 2xx, as the store last counted them (the longest among the receivers of this process); the service disables an endpoint after 20 failed attempts in a row.',
      unit: '{answer}',
    })
    .addCallback((result) => {
      let longest = 0
      for (const ref of live) {
        const holder = ref.deref()
        if (holder === undefined) live.delete(ref)
        else if (holder.streak > longest) longest = holder.streak
      }
      result.observe(longest)
    })
  return live
}

/** How many deliveries may pass, while no SDK is registered, before the providers are looked at again. */
const IDLE_CHECK_EVERY = 64

/** The instruments of one meter provider; made again when the global provider changes. */
interface Instruments {
  deliveries: Counter
  receiveDuration: Histogram
  handlerDuration: Histogram
  /** Attributes by outcome and code, made once each: no object per delivery. */
  byAnswer: Map<string, Attributes>
  byHandler: Map<string, Attributes>
}

/**
 * The receiver's OpenTelemetry: a span per delivery, one around the handler,
 * and the metrics. {@link ReceiverTelemetry.start} answers undefined whenever
 * no SDK is registered, and the receiver then does no telemetry work at all.
 */
export class ReceiverTelemetry {
  readonly #api: Api
  readonly #tracer: Tracer
  /** What the global tracer provider hands out while no SDK is registered. */
  readonly #noopTracing: unknown
  readonly #noopMeter: Meter
  #meterProvider: unknown
  #instruments: Instruments | undefined
  /** Read by the failure-streak gauge. */
  streak = 0

  constructor(api: Api) {
    this.#api = api
    this.#tracer = api.trace.getTracer(INSTRUMENTATION_NAME)
    this.#noopTracing = new api.ProxyTracerProvider().getDelegate()
    this.#noopMeter = api.createNoopMeter()
  }

  /** The instruments of the current meter provider, or undefined when it is the no-op one. */
  #currentInstruments(): Instruments | undefined {
    const provider = this.#api.metrics.getMeterProvider()
    if (provider === this.#meterProvider) return this.#instruments
    this.#meterProvider = provider
    const meter = provider.getMeter(INSTRUMENTATION_NAME)
    this.#instruments = meter === this.#noopMeter ? undefined : this.#makeInstruments(meter)
    return this.#instruments
  }

  #makeInstruments(meter: Meter): Instruments {
    const advice = { explicitBucketBoundaries: DURATION_BUCKETS }
    streakGaugeOf(meter).add(new WeakRef(this))
    return {
      deliveries: meter.createCounter(TELEMETRY_NAMES.deliveries, {
        description: 'Deliveries answered, by outcome and error code.',
        unit: '{delivery}',
      }),
      receiveDuration: meter.createHistogram(TELEMETRY_NAMES.receiveDuration, {
        description: 'Time from receive() to its answer, handler included.',
        unit: 's',
        advice,
      }),
      handlerDuration: meter.createHistogram(TELEMETRY_NAMES.handlerDuration, {
        description: "Time the event's handler took, until its promise settled.",
        unit: 's',
        advice,
      }),
      byAnswer: new Map(),
      byHandler: new Map(),
    }
  }

  #tracing(): boolean {
    const provider = this.#api.trace.getTracerProvider() as { getDelegate?: () => unknown }
    const delegate = typeof provider.getDelegate === 'function' ? provider.getDelegate() : provider
    return delegate !== this.#noopTracing
  }

  /** A recorder for one delivery, or undefined when nothing would record it. */
  start(): DeliveryTrace | undefined {
    // With no SDK registered, the providers are looked at again only every
    // IDLE_CHECK_EVERY deliveries: the API installed costs nothing measurable, and
    // an SDK registered later is picked up within that many deliveries.
    if (this.#idle && ++this.#idleSkipped < IDLE_CHECK_EVERY) return undefined
    const instruments = this.#currentInstruments()
    const tracing = this.#tracing()
    this.#idle = instruments === undefined && !tracing
    this.#idleSkipped = 0
    if (this.#idle) return undefined
    return new DeliveryTrace(this.#api, tracing ? this.#tracer : undefined, instruments)
  }

  #idle = false
  #idleSkipped = 0
}

const seconds = (fromMs: number) => (performance.now() - fromMs) / 1000

/** The attributes for a key, made the first time it is seen. */
function cached(map: Map<string, Attributes>, key: string, make: () => Attributes): Attributes {
  let attributes = map.get(key)
  if (attributes === undefined) {
    attributes = make()
    map.set(key, attributes)
  }
  return attributes
}

/** What one delivery records: its span, and its measurements at the end. */
export class DeliveryTrace {
  readonly #api: Api
  readonly #tracer: Tracer | undefined
  readonly #instruments: Instruments | undefined
  readonly #startedAt = performance.now()
  readonly #span: Span | undefined
  /** The context the delivery span lives in, so the handler's span nests under it. */
  readonly #context: Context | undefined

  constructor(api: Api, tracer: Tracer | undefined, instruments: Instruments | undefined) {
    this.#api = api
    this.#tracer = tracer
    this.#instruments = instruments
    if (tracer !== undefined) {
      // A child of whatever span is active: the HTTP server span when the app traces requests.
      const parent = api.context.active()
      const span = tracer.startSpan(
        TELEMETRY_NAMES.deliverySpan,
        {
          kind: api.SpanKind.CONSUMER,
          attributes: {
            [ATTR.system]: 'affiliate_webhook',
            [ATTR.operationType]: 'process',
            [ATTR.operationName]: 'process',
          },
        },
        parent,
      )
      this.#span = span
      this.#context = api.trace.setSpan(parent, span)
    }
  }

  /** The event is verified: what it is goes on the span. */
  verified(delivery: VerifiedDelivery): void {
    const span = this.#span
    if (span === undefined || !span.isRecording()) return
    span.setAttribute(ATTR.messageId, delivery.event.id)
    span.setAttribute(ATTR.eventType, delivery.event.type)
    if (delivery.attempt !== null) span.setAttribute(ATTR.attempt, delivery.attempt)
    if (delivery.conversionId !== undefined) {
      span.setAttribute(ATTR.conversionId, delivery.conversionId)
    }
  }

  /**
   * Runs the handler inside its own span (so the user's spans nest under it) and
   * times it until its promise settles. Returns what the handler returned.
   */
  handle(run: () => unknown, event: AnyWebhookEvent): unknown {
    const startedAt = performance.now()
    const api = this.#api
    const span =
      this.#tracer === undefined
        ? undefined
        : this.#tracer.startSpan(
            TELEMETRY_NAMES.handlerSpan,
            { kind: api.SpanKind.INTERNAL, attributes: { [ATTR.eventType]: event.type } },
            this.#context,
          )
    const done = (error?: unknown) => {
      if (span !== undefined) {
        if (error !== undefined) {
          span.recordException(error instanceof Error ? error : String(error))
          span.setAttribute(ATTR.errorType, errorTypeOf(error))
          span.setStatus({ code: api.SpanStatusCode.ERROR })
        }
        span.end()
      }
      const instruments = this.#instruments
      if (instruments !== undefined) {
        const failed = error !== undefined
        const key = `${event.type}|${failed}`
        const attributes = cached(instruments.byHandler, key, () =>
          failed
            ? { [ATTR.eventType]: event.type, [ATTR.errorType]: 'handler_failed' }
            : { [ATTR.eventType]: event.type },
        )
        instruments.handlerDuration.record(seconds(startedAt), attributes)
      }
    }
    let returned: unknown
    try {
      returned =
        span === undefined
          ? run()
          : api.context.with(api.trace.setSpan(this.#context as Context, span), run)
    } catch (error) {
      done(error ?? 'undefined')
      throw error
    }
    if (!isPromiseLike(returned)) {
      done()
      return returned
    }
    return Promise.resolve(returned).then(
      (value) => {
        done()
        return value
      },
      (error: unknown) => {
        done(error ?? 'undefined')
        throw error
      },
    )
  }

  /** The answer is decided: outcome and code on the span, which ends, and the measurements. */
  end(result: ReceiveResult): void {
    const code = result.error?.code
    const span = this.#span
    if (span !== undefined) {
      if (span.isRecording()) {
        span.setAttribute(ATTR.outcome, result.outcome)
        span.setAttribute(ATTR.status, result.status)
        if (code !== undefined) {
          span.setAttribute(ATTR.errorType, code)
          span.setStatus({ code: this.#api.SpanStatusCode.ERROR, message: code })
        }
      }
      span.end()
    }
    const instruments = this.#instruments
    if (instruments === undefined) return
    const attributes = cached(instruments.byAnswer, `${result.outcome}|${code ?? ''}`, () =>
      code === undefined
        ? { [ATTR.outcome]: result.outcome }
        : { [ATTR.outcome]: result.outcome, [ATTR.errorType]: code },
    )
    instruments.deliveries.add(1, attributes)
    instruments.receiveDuration.record(seconds(this.#startedAt), attributes)
  }
}

/** `error.type` for a handler's exception: its class name, as the conventions suggest. */
function errorTypeOf(error: unknown): string {
  if (error instanceof Error) return error.name || error.constructor?.name || 'Error'
  return '_OTHER'
}

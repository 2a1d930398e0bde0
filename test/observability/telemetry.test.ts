/**
 * OpenTelemetry with a real SDK registered: the delivery span, the handler span
 * and the metrics for every kind of answer, read back from an in-memory span
 * exporter and metric reader; and the delivery span under the HTTP server span
 * of a real node:http server, with the async-hooks context manager.
 */
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  createReceiver,
  memoryStore,
  type Receiver,
  type ReceiverOptions,
  TELEMETRY_NAMES,
} from '@affiliate-webhooks/core'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import { affiliateWebhook } from '@affiliate-webhooks/node'
import { context, metrics, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import {
  AggregationTemporality,
  type DataPoint,
  type Histogram,
  MeterProvider,
  MetricReader,
} from '@opentelemetry/sdk-metrics'
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'

const SECRET = 'whsec_telemetry_test_secret'

class TestReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE })
  }
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve()
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve()
  }
}

const spans = new InMemorySpanExporter()
let reader: TestReader
let meterProvider: MeterProvider

beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  trace.setGlobalTracerProvider(
    new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }),
  )
})

// A new meter provider per case, so each case reads its own counts.
beforeEach(() => {
  spans.reset()
  metrics.disable()
  reader = new TestReader()
  meterProvider = new MeterProvider({ readers: [reader] })
  metrics.setGlobalMeterProvider(meterProvider)
})

afterAll(() => {
  trace.disable()
  metrics.disable()
  context.disable()
})

async function delivery(event: object, options: { secret?: string; attempt?: number } = {}) {
  const { headers, body } = await signedDelivery({
    secret: options.secret ?? SECRET,
    event,
    attempt: options.attempt ?? 2,
  })
  return { headers, rawBody: new TextEncoder().encode(body) }
}

function receiver(options: Partial<ReceiverOptions> = {}): Receiver {
  return createReceiver({
    secret: SECRET,
    onConversion: () => {},
    logger: false,
    ...options,
  } as ReceiverOptions)
}

const named = (name: string) => spans.getFinishedSpans().filter((s) => s.name === name)
const deliverySpans = () => named(TELEMETRY_NAMES.deliverySpan)
const onlyDeliverySpan = (): ReadableSpan => {
  const found = deliverySpans()
  expect(found).toHaveLength(1)
  return found[0] as ReadableSpan
}

/** Data points of one metric, by name. */
async function points(name: string): Promise<DataPoint<unknown>[]> {
  const { resourceMetrics } = await reader.collect()
  const metric = resourceMetrics.scopeMetrics
    .filter((s) => s.scope.name === '@affiliate-webhooks/core')
    .flatMap((s) => s.metrics)
    .find((m) => m.descriptor.name === name)
  return (metric?.dataPoints ?? []) as DataPoint<unknown>[]
}

async function deliveriesCounted(): Promise<Record<string, number>> {
  const counted: Record<string, number> = {}
  for (const point of await points(TELEMETRY_NAMES.deliveries)) {
    const { attributes } = point
    const key = `${attributes['affiliate_webhook.outcome']}${attributes['error.type'] ? `/${attributes['error.type']}` : ''}`
    counted[key] = point.value as number
  }
  return counted
}

async function histogramCount(name: string): Promise<number> {
  return (await points(name)).reduce((sum, p) => sum + (p.value as Histogram).count, 0)
}

describe('OpenTelemetry: one span per delivery, the handler in a child span, metrics', () => {
  it('processed: the event on the span, the handler span under it, the user span under that', async () => {
    const userTracer = trace.getTracer('the-app')
    const r = receiver({
      onConversion: () => userTracer.startActiveSpan('db.upsert', (span) => span.end()),
    })
    const event = buildConversionEvent({ conversion: { id: 4711 } })
    expect((await r.receive(await delivery(event))).outcome).toBe('processed')

    const span = onlyDeliverySpan()
    expect(span.kind).toBe(SpanKind.CONSUMER)
    expect(span.attributes).toEqual({
      'messaging.system': 'affiliate_webhook',
      'messaging.operation.type': 'process',
      'messaging.operation.name': 'process',
      'messaging.message.id': event.id,
      'affiliate_webhook.event.type': 'conversion.created',
      'affiliate_webhook.delivery.attempt': 2,
      'affiliate_webhook.conversion.id': 4711,
      'affiliate_webhook.outcome': 'processed',
      'affiliate_webhook.response.status_code': 200,
    })
    expect(span.status.code).toBe(SpanStatusCode.UNSET)

    const [handler] = named(TELEMETRY_NAMES.handlerSpan)
    expect(handler?.parentSpanContext?.spanId).toBe(span.spanContext().spanId)
    expect(handler?.attributes).toEqual({ 'affiliate_webhook.event.type': 'conversion.created' })
    const [user] = named('db.upsert')
    expect(user?.parentSpanContext?.spanId).toBe(handler?.spanContext().spanId)
    expect(user?.spanContext().traceId).toBe(span.spanContext().traceId)

    expect(await deliveriesCounted()).toEqual({ processed: 1 })
    expect(await histogramCount(TELEMETRY_NAMES.receiveDuration)).toBe(1)
    expect(await histogramCount(TELEMETRY_NAMES.handlerDuration)).toBe(1)
  })

  it('duplicate and stale: no handler span, the outcome on the delivery span and the counter', async () => {
    const r = receiver({ store: memoryStore() })
    const created = Date.now() - 60_000
    const newer = buildConversionEvent({
      type: 'conversion.updated',
      createdAt: created + 1000,
      conversion: { id: 9 },
    })
    const older = buildConversionEvent({ createdAt: created, conversion: { id: 9 } })
    expect((await r.receive(await delivery(newer))).outcome).toBe('processed')
    expect((await r.receive(await delivery(newer))).outcome).toBe('duplicate')
    expect((await r.receive(await delivery(older))).outcome).toBe('stale')

    const outcomes = deliverySpans().map((s) => s.attributes['affiliate_webhook.outcome'])
    expect(outcomes).toEqual(['processed', 'duplicate', 'stale'])
    expect(named(TELEMETRY_NAMES.handlerSpan)).toHaveLength(1)
    expect(deliverySpans()[2]?.attributes['messaging.message.id']).toBe(older.id)
    expect(await deliveriesCounted()).toEqual({ processed: 1, duplicate: 1, stale: 1 })
    expect(await histogramCount(TELEMETRY_NAMES.handlerDuration)).toBe(1)
  })

  it('handler threw: both spans in error, the exception on the handler span, 500 counted', async () => {
    class DatabaseDown extends Error {
      override name = 'DatabaseDown'
    }
    const r = receiver({
      onConversion: () => Promise.reject(new DatabaseDown('connection refused')),
    })
    const answer = await r.receive(await delivery(buildConversionEvent()))
    expect(answer.status).toBe(500)

    const span = onlyDeliverySpan()
    expect(span.attributes['error.type']).toBe('handler_failed')
    expect(span.attributes['affiliate_webhook.outcome']).toBe('failed')
    expect(span.status.code).toBe(SpanStatusCode.ERROR)
    const [handler] = named(TELEMETRY_NAMES.handlerSpan)
    expect(handler?.status.code).toBe(SpanStatusCode.ERROR)
    expect(handler?.attributes['error.type']).toBe('DatabaseDown')
    expect(handler?.events.map((e) => e.name)).toEqual(['exception'])
    expect(await deliveriesCounted()).toEqual({ 'failed/handler_failed': 1 })
    const [handlerPoint] = await points(TELEMETRY_NAMES.handlerDuration)
    expect(handlerPoint?.attributes['error.type']).toBe('handler_failed')
  })

  it('in progress: 409 with error.type event_in_progress', async () => {
    let finish!: () => void
    const r = receiver({
      onConversion: () =>
        new Promise<void>((resolve) => {
          finish = resolve
        }),
    })
    const input = await delivery(buildConversionEvent())
    const first = r.receive(input)
    // The first delivery's handler is running (its promise made) before the second arrives.
    await vi.waitFor(() => expect(finish).toBeDefined())
    expect((await r.receive(input)).status).toBe(409)
    finish()
    expect((await first).outcome).toBe('processed')
    expect(await deliveriesCounted()).toEqual({
      processed: 1,
      'in_progress/event_in_progress': 1,
    })
  })

  const now = Math.floor(Date.now() / 1000)
  const refusals: [
    string,
    () => Promise<{ headers: Record<string, string>; rawBody: Uint8Array }>,
  ][] = [
    [
      'missing_signature',
      async () => {
        const { headers, rawBody } = await delivery(buildConversionEvent())
        const { 'service-signature': _, ...rest } = headers
        return { headers: rest, rawBody }
      },
    ],
    [
      'malformed_signature',
      async () => {
        const { headers, rawBody } = await delivery(buildConversionEvent())
        return { headers: { ...headers, 'service-signature': 'v1=abc' }, rawBody }
      },
    ],
    [
      'signature_mismatch',
      () => delivery(buildConversionEvent(), { secret: 'whsec_not_the_right_one' }),
    ],
    [
      'timestamp_outside_tolerance',
      async () => {
        const { headers, body } = await signedDelivery({
          secret: SECRET,
          event: buildConversionEvent(),
          timestamp: now - 3600,
        })
        return { headers, rawBody: new TextEncoder().encode(body) }
      },
    ],
    ['malformed_json', () => delivery('{"id": "evt_' as unknown as object)],
    ['invalid_payload', () => delivery({ id: 'evt_x', type: 'conversion.created' })],
    [
      'event_id_mismatch',
      async () => {
        const { headers, rawBody } = await delivery(buildConversionEvent())
        return { headers: { ...headers, 'service-event-id': 'evt_other' }, rawBody }
      },
    ],
  ]

  it.each(refusals)(
    'rejected with %s: error.type, outcome and status on the span and counter',
    async (code, make) => {
      const r = receiver()
      const answer = await r.receive(await make())
      expect(answer.error?.code).toBe(code)
      const span = onlyDeliverySpan()
      expect(span.attributes['error.type']).toBe(code)
      expect(span.attributes['affiliate_webhook.outcome']).toBe('rejected')
      expect(span.attributes['affiliate_webhook.response.status_code']).toBe(answer.status)
      expect(span.status.code).toBe(SpanStatusCode.ERROR)
      // Nothing about the event is trusted before it is verified.
      expect(span.attributes['messaging.message.id']).toBeUndefined()
      expect(named(TELEMETRY_NAMES.handlerSpan)).toHaveLength(0)
      expect(await deliveriesCounted()).toEqual({ [`rejected/${code}`]: 1 })
    },
  )

  it('rejected with payload_too_large', async () => {
    const r = receiver({ maxBodyBytes: 10 })
    const answer = await r.receive(await delivery(buildConversionEvent()))
    expect(answer.status).toBe(413)
    expect(onlyDeliverySpan().attributes['error.type']).toBe('payload_too_large')
    expect(await deliveriesCounted()).toEqual({ 'rejected/payload_too_large': 1 })
  })

  it('exposes the failure streak as a gauge', async () => {
    const r = receiver({ onConversion: () => Promise.reject(new Error('down')) })
    for (let i = 0; i < 3; i++) await r.receive(await delivery(buildConversionEvent()))
    const [point] = await points(TELEMETRY_NAMES.failureStreak)
    expect(point?.value).toBe(3)
  })

  it('one failure-streak gauge for the process: the longest streak, whichever receiver has it', async () => {
    const failing = receiver({ onConversion: () => Promise.reject(new Error('down')) })
    const healthy = receiver()
    for (let i = 0; i < 4; i++) await failing.receive(await delivery(buildConversionEvent()))
    await healthy.receive(await delivery(buildConversionEvent()))
    const observed = await points(TELEMETRY_NAMES.failureStreak)
    expect(observed.map((point) => point.value)).toEqual([4])
  })

  it('telemetry: the API passed in (as on Workers) records the same, at once; anything else is refused', async () => {
    const api = await import('@opentelemetry/api')
    const r = receiver({ telemetry: api })
    expect((await r.receive(await delivery(buildConversionEvent()))).outcome).toBe('processed')
    expect(spans.getFinishedSpans().map((span) => span.name)).toContain(
      TELEMETRY_NAMES.deliverySpan,
    )
    expect(() => receiver({ telemetry: { trace: {} } })).toThrow(/@opentelemetry\/api module/)
  })

  it('telemetry: false records nothing even with an SDK registered', async () => {
    const r = receiver({ telemetry: false })
    expect((await r.receive(await delivery(buildConversionEvent()))).outcome).toBe('processed')
    expect(spans.getFinishedSpans()).toEqual([])
    expect(await points(TELEMETRY_NAMES.deliveries)).toEqual([])
  })
})

describe('OpenTelemetry over a real node:http server', () => {
  let server: Server
  afterAll(async () => {
    server.closeAllConnections()
    server.close()
    await once(server, 'close')
  })

  it('nests the delivery span under the HTTP server span that is active', async () => {
    const tracer = trace.getTracer('http-server')
    const handler = affiliateWebhook({ secret: SECRET, onConversion: () => {}, logger: false })
    server = createServer((req, res) => {
      // What HTTP instrumentation does: a SERVER span, active while the request is handled.
      const span = tracer.startSpan(`${req.method} /hooks`, { kind: SpanKind.SERVER })
      res.on('finish', () => span.end())
      context.with(trace.setSpan(context.active(), span), () => handler(req, res))
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    const { port } = server.address() as AddressInfo
    const event = buildConversionEvent()
    const { headers, body } = await signedDelivery({ secret: SECRET, event })
    const response = await fetch(`http://127.0.0.1:${port}/hooks`, {
      method: 'POST',
      headers,
      body,
    })
    expect(response.status).toBe(200)
    await response.text()
    await new Promise((resolve) => setTimeout(resolve, 20))

    const [serverSpan] = named('POST /hooks')
    const receive = onlyDeliverySpan()
    expect(serverSpan?.kind).toBe(SpanKind.SERVER)
    expect(receive.parentSpanContext?.spanId).toBe(serverSpan?.spanContext().spanId)
    expect(receive.spanContext().traceId).toBe(serverSpan?.spanContext().traceId)
    expect(receive.attributes['messaging.message.id']).toBe(event.id)
  })
})

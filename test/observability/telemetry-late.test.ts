/**
 * The receiver and an OpenTelemetry SDK registered after it: no SDK, no import
 * of @opentelemetry/api (a cold start does not pay for it); once one registers,
 * the next delivery imports the API and is recorded.
 */
import { createReceiver, TELEMETRY_NAMES } from '@affiliate-webhooks/core'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import { trace } from '@opentelemetry/api'
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { platform } from '../../packages/core/src/platform/index.js'

const SECRET = 'whsec_telemetry_late_test'
const OTEL_GLOBAL = Symbol.for('opentelemetry.js.api.1')

afterAll(() => trace.disable())

async function delivery() {
  const { headers, body } = await signedDelivery({ secret: SECRET, event: buildConversionEvent() })
  return { headers, rawBody: new TextEncoder().encode(body) }
}

describe('OpenTelemetry registered after the receiver was created', () => {
  it('imports the API only once an SDK registered, and records from then on', async () => {
    const importing = vi.spyOn(platform, 'importOtelApi')
    const receiver = createReceiver({ secret: SECRET, onConversion: () => {}, logger: false })
    expect((globalThis as Record<symbol, unknown>)[OTEL_GLOBAL]).toBeUndefined()
    expect((await receiver.receive(await delivery())).outcome).toBe('processed')
    expect(importing).not.toHaveBeenCalled()

    const spans = new InMemorySpanExporter()
    trace.setGlobalTracerProvider(
      new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }),
    )
    expect((await receiver.receive(await delivery())).outcome).toBe('processed')
    expect(importing).toHaveBeenCalledTimes(1)
    expect(spans.getFinishedSpans().map((s) => s.name)).toContain(TELEMETRY_NAMES.deliverySpan)
  })
})

/**
 * The OpenTelemetry SDK, set up the way an app does it before anything else:
 * a context manager (so spans started in a request nest), a tracer provider and
 * a meter provider, both printing to the console instead of a collector.
 * Swap the exporters for OTLP ones to send the same data to a real backend.
 */
import { context, metrics, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import {
  ConsoleMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics'
import {
  BasicTracerProvider,
  ConsoleSpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base'

export function startTelemetry() {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(new ConsoleSpanExporter())],
  })
  trace.setGlobalTracerProvider(tracerProvider)
  const meterProvider = new MeterProvider({
    readers: [
      new PeriodicExportingMetricReader({
        exporter: new ConsoleMetricExporter(),
        exportIntervalMillis: 60_000,
      }),
    ],
  })
  metrics.setGlobalMeterProvider(meterProvider)
  return {
    /** Stops both providers; the meter provider prints the metrics one last time. */
    async shutdown() {
      await meterProvider.shutdown()
      await tracerProvider.shutdown()
    },
  }
}

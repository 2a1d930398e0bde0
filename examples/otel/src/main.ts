/**
 * `npm start -w examples/otel`: a node:http receiver with OpenTelemetry on,
 * three deliveries sent to it (one processed, the same one again, one with a
 * wrong secret), and the spans and metrics they made printed to the console.
 */
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import { affiliateWebhook } from '@affiliate-webhooks/node'
import { context, SpanKind, trace } from '@opentelemetry/api'
import { startTelemetry } from './telemetry.js'

// The SDK first: the receiver picks up @opentelemetry/api by itself.
const telemetry = startTelemetry()

const secret = process.env.AFFILIATE_WEBHOOK_SECRET || 'whsec_example_otel_local_secret'
const tracer = trace.getTracer('example-otel')

const webhook = affiliateWebhook({
  path: '/hooks',
  secret,
  onConversion: (conversion) =>
    // The app's own work, traced as usual: it nests under the receiver's handler span.
    tracer.startActiveSpan('conversions.upsert', (span) => {
      span.setAttribute('conversion.status', conversion.status)
      span.end()
    }),
})

// What HTTP instrumentation (@opentelemetry/instrumentation-http) does for every
// request: a SERVER span, active while the request is handled.
const server = createServer((req, res) => {
  const span = tracer.startSpan(`${req.method} ${req.url}`, { kind: SpanKind.SERVER })
  res.on('finish', () => {
    span.setAttribute('http.response.status_code', res.statusCode)
    span.end()
  })
  context.with(trace.setSpan(context.active(), span), () => webhook(req, res))
})
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1')
await once(server, 'listening')
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`

async function send(label: string, event: object, signingSecret = secret) {
  const { headers, body } = await signedDelivery({ secret: signingSecret, event })
  const response = await fetch(url, { method: 'POST', headers, body })
  console.log(`--- ${label}: ${response.status} ${await response.text()}`)
}

const event = buildConversionEvent({ conversion: { id: 4711 } })
await send('a new event', event)
await send('the same event again', event)
await send('signed with another secret', buildConversionEvent(), 'whsec_not_this_endpoints')

server.close()
await telemetry.shutdown()

/**
 * `npm start`: a receiver on a local port (the node adapter, memory store) gets what
 * `affiliate-webhooks simulate` sends, the same delivery engine with the same summary:
 * conversion lifecycles under the service's delivery rules, with duplicates,
 * out-of-order arrivals and a handler that fails now and then. Then two deliveries
 * the receiver must refuse, sent like `affiliate-webhooks send` and explained like
 * `affiliate-webhooks verify`. It doubles as a smoke test: exit 1 on any surprise.
 */
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { formatSimulationProgress, formatSimulationSummary } from '@affiliate-webhooks/cli'
import type { Conversion } from '@affiliate-webhooks/core'
import { diagnoseSignature, memoryStore } from '@affiliate-webhooks/core'
import { buildConversionEvent } from '@affiliate-webhooks/core/testing'
import { deliveryHeaders, runSimulation, sendAttempt } from '@affiliate-webhooks/emulator/internal'
import { affiliateWebhook } from '@affiliate-webhooks/node'

// The service gives each endpoint its own secret; a fresh one per run proves nothing is baked in.
const secret = `whsec_${randomBytes(24).toString('base64')}`

// The publisher's "conversions table". A plain upsert is enough because duplicates and
// older updates never reach the handler: ordering is the receiver's job, not the table's.
const conversionsTable = new Map<number, Pick<Conversion, 'status' | 'commission'>>()
const firstSeen = new Set<string>()

// The receiver reports every delivery it does not acknowledge (by default on
// stderr); here the lines are kept and shown after the summary.
const logged: string[] = []
const keep = (line: string) => {
  logged.push(line)
}

const server = createServer(
  affiliateWebhook({
    path: '/hooks',
    secret,
    store: memoryStore(),
    logger: { warn: keep, error: keep },
    onConversion: ({ id, status, commission }, event) => {
      // A downstream that fails the first time for about one event in eight: the
      // receiver answers 500 and the service retries a minute later.
      if (!firstSeen.has(event.id)) {
        firstSeen.add(event.id)
        if (Math.random() < 0.125) throw new Error('downstream timeout')
      }
      conversionsTable.set(id, { status, commission })
    },
  }),
)
server.listen(0, '127.0.0.1')
await once(server, 'listening')
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`

const settings = { conversions: 25, duplicates: 0.2, reorder: 0.2, concurrency: 8, timeScale: 3600 }
console.log(`Receiver: node adapter + memory store at ${url}`)
console.log(
  'On purpose, its handler fails the first try of about one event in eight (a "downstream\n' +
    'timeout"): the receiver answers 500 and you can watch the service retry it.\n',
)
console.log(
  `$ affiliate-webhooks simulate --url ${url} --conversions ${settings.conversions} --duplicates ${settings.duplicates} --reorder ${settings.reorder} --concurrency ${settings.concurrency} --time-scale ${settings.timeScale}\n`,
)
const progress = process.stderr.isTTY
  ? (line: string) => process.stderr.write(`\r${line}\x1b[K`)
  : undefined
const report = await runSimulation({
  url,
  secret,
  ...settings,
  ...(progress ? { onProgress: (p) => progress(formatSimulationProgress(p)) } : {}),
})
if (progress) process.stderr.write('\n')
console.log(formatSimulationSummary(report))

let surprises = report.ok ? 0 : 1

// Whatever the arrival order, each conversion must end in its newest event's status.
const rows: string[] = []
for (const expected of report.expected) {
  const row = conversionsTable.get(expected.conversionId)
  const ok = row?.status === expected.status
  if (!ok) surprises++
  if (!ok || rows.length < 6) {
    rows.push(
      `  ${expected.conversionId}  ${(row?.status ?? '(missing)').padEnd(16)} ${ok ? 'ok' : `MISMATCH, expected ${expected.status}`}`,
    )
  }
}
console.log(
  `\nConversions table (${conversionsTable.size} rows; each must hold its newest status):`,
)
console.log(rows.join('\n'))
if (report.expected.length > rows.length) {
  console.log(`  ... ${report.expected.length - rows.length} more, all at their newest status`)
}

// Attempt by attempt, what the receiver answered for three telling conversions: one
// with a replayed duplicate, one whose older event arrived late, one whose handler
// failed once. Every attempt is in the simulator's delivery history.
const answerOf = (responseBody: string | undefined) => {
  try {
    const json = JSON.parse(responseBody ?? '') as { outcome?: string; error?: { code?: string } }
    return json.outcome ?? json.error?.code ?? ''
  } catch {
    return ''
  }
}
const attempts = report.deliveries.flatMap((delivery) =>
  delivery.attempts.map((attempt) => ({
    delivery,
    attempt,
    answer: answerOf(attempt.responseBody),
  })),
)
const picked = new Set<number>()
for (const wanted of [
  (a: (typeof attempts)[number]) => a.attempt.round > 0,
  (a: (typeof attempts)[number]) => a.answer === 'stale',
  (a: (typeof attempts)[number]) => a.answer === 'handler_failed',
]) {
  const found = attempts.find((a) => wanted(a) && !picked.has(a.delivery.conversionId ?? -1))
  if (found?.delivery.conversionId !== undefined) picked.add(found.delivery.conversionId)
}
console.log('\nEvery attempt for three of the conversions, in the order sent:\n')
console.log('  #    conversion  event                       attempt     HTTP  answer')
for (const { delivery, attempt, answer } of attempts
  .filter((a) => picked.has(a.delivery.conversionId ?? -1))
  .sort((a, b) => a.attempt.sequence - b.attempt.sequence)) {
  const { status } = (JSON.parse(delivery.body) as { data: { conversion: Conversion } }).data
    .conversion
  const label = `${delivery.eventType.replace('conversion.', '')} (${status})`
  const which = attempt.round > 0 ? `${attempt.attempt} (replay)` : String(attempt.attempt)
  console.log(
    `  ${String(attempt.sequence).padEnd(4)} ${String(delivery.conversionId).padEnd(11)} ${label.padEnd(27)} ${which.padEnd(11)} ${String(attempt.responseStatus ?? '-').padEnd(5)} ${answer}`,
  )
}

// Two deliveries the receiver must refuse, and what `verify` says about each.
const event = buildConversionEvent({
  conversion: { id: 1003, status: 'rejected', commission: '0.00' },
})
const body = JSON.stringify(event)
const refusals = [
  {
    what: 'body re-serialised by a proxy (pretty-printed JSON)',
    headers: await deliveryHeaders({ secret, body, attempt: 1, eventId: event.id }),
    sent: JSON.stringify(event, null, 2),
    code: 'signature_mismatch',
    reason: 'body_reserialized',
  },
  {
    what: 'signed 10 minutes ago (a replayed capture, or a wrong clock)',
    headers: await deliveryHeaders({
      secret,
      body,
      attempt: 1,
      eventId: event.id,
      timestamp: Math.floor(Date.now() / 1000) - 600,
    }),
    sent: body,
    code: 'timestamp_outside_tolerance',
    reason: 'timestamp_outside_tolerance',
  },
]
console.log(
  `\nWhat the receiver logged: ${logged.length} line${logged.length === 1 ? '' : 's'}, one per delivery it did not acknowledge (the first ${Math.min(2, logged.length)}, without their stacks):`,
)
for (const line of logged.slice(0, 2)) console.log(`  ${line.split('\n')[0]}`)

console.log('\nRefused deliveries ($ affiliate-webhooks send ..., then verify):')
for (const refusal of refusals) {
  const answer = await sendAttempt({ url, headers: refusal.headers, body: refusal.sent })
  const diagnosis = await diagnoseSignature({
    header: refusal.headers['Service-Signature'],
    body: new TextEncoder().encode(refusal.sent),
    secret,
  })
  const ok =
    answer.responseStatus === 401 &&
    answer.responseBody?.includes(refusal.code) === true &&
    diagnosis.code === refusal.reason
  if (!ok) surprises++
  console.log(`  ${refusal.what}`)
  console.log(`    send:   ${answer.responseStatus} ${answer.responseBody}`)
  console.log(`    verify: ${diagnosis.code}: ${diagnosis.message}${ok ? '' : '  UNEXPECTED'}`)
}

server.close()
console.log(surprises === 0 ? '\nAll as expected.' : `\n${surprises} unexpected result(s).`)
process.exitCode = surprises === 0 ? 0 : 1

/**
 * `npm start`: a receiver on a local port answers the kind of burst the affiliate API
 * sends, over real HTTP, then prints what it answered and what the publisher stored.
 * It doubles as a smoke test: it exits 1 when any answer is not the expected one.
 */
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Conversion, ConversionStatus, Outcome, WebhookEvent } from '@affiliate-webhooks/core'
import { memoryStore } from '@affiliate-webhooks/core'
import {
  buildConversionEvent,
  buildTestEvent,
  signedDelivery,
} from '@affiliate-webhooks/core/testing'
import { affiliateWebhook } from '@affiliate-webhooks/node'

// The service gives each endpoint its own secret; a fresh one per run proves nothing is baked in.
const secret = `whsec_${randomBytes(24).toString('base64')}`

// The publisher's "conversions table". A plain upsert is enough because duplicates and
// older updates never reach the handler: ordering is the receiver's job, not the table's.
const conversionsTable = new Map<number, Pick<Conversion, 'status' | 'commission' | 'currency'>>()

const server = createServer(
  affiliateWebhook({
    path: '/hooks',
    secret,
    store: memoryStore(),
    onConversion: ({ id, status, commission, currency }) => {
      conversionsTable.set(id, { status, commission, currency })
    },
    // No `on['webhook.test']` handler on purpose: the test event is answered `ignored` (200).
  }),
)
server.listen(0, '127.0.0.1')
await once(server, 'listening')
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`

// createdAt orders the events of one conversion, so each lifecycle moves forward in time.
const HOUR = 3_600_000
const start = Date.now() - 72 * HOUR
const SALES: Record<number, Partial<Conversion>> = {
  1001: { programId: 42, saleAmount: '129.90', commission: '9.09', currency: 'EUR' },
  1002: { programId: 42, saleAmount: '349.00', commission: '24.43', currency: 'EUR' },
  1003: { programId: 77, saleAmount: '59.99', commission: '4.20', currency: 'EUR' },
}
const event = (id: number, status: ConversionStatus, hour: number, extra?: Partial<Conversion>) =>
  buildConversionEvent({
    type: status === 'pending' ? 'conversion.created' : 'conversion.updated',
    createdAt: start + hour * HOUR,
    conversion: { ...SALES[id], ...extra, id, status },
  })

const lifecycle = (id: number, hour: number) => ({
  pending: event(id, 'pending', hour),
  approved: event(id, 'approved', hour + 20),
  available: event(id, 'available', hour + 40),
  payout: event(id, 'ready_for_payout', hour + 60),
})
const a = lifecycle(1001, 0)
const b = lifecycle(1002, 1)
// A rejected sale earns nothing, which makes its commission worth forging.
const c = {
  pending: event(1003, 'pending', 2),
  rejected: event(1003, 'rejected', 22, { commission: '0.00' }),
}

interface Expect {
  status: number
  outcome: Outcome
  code?: string
}
interface Step {
  event: WebhookEvent
  note?: string
  attempt?: number
  /** Unix seconds the delivery is signed at; default now. */
  signedAt?: number
  /** Changes the body after it was signed, as a proxy or an attacker would. */
  tamper?: (body: string) => string
  expect: Expect
}

const ok = (outcome: Outcome): Expect => ({ status: 200, outcome })
const refused = (code: string): Expect => ({ status: 401, outcome: 'rejected', code })
const nowSeconds = () => Math.floor(Date.now() / 1000)

// Sent one after another so the answers, and so the demo's expectations, are deterministic.
const steps: Step[] = [
  { event: buildTestEvent(), note: 'dashboard "send test"', expect: ok('ignored') },
  { event: a.pending, expect: ok('processed') },
  { event: b.pending, expect: ok('processed') },
  { event: a.pending, note: 'duplicate (attempt 2)', attempt: 2, expect: ok('duplicate') },
  { event: c.pending, expect: ok('processed') },
  { event: a.approved, expect: ok('processed') },
  { event: b.approved, expect: ok('processed') },
  {
    event: c.rejected,
    note: 'tampered body (0.00 -> 8.00)',
    tamper: (body) => body.replace('"commission":"0.00"', '"commission":"8.00"'),
    expect: refused('signature_mismatch'),
  },
  { event: c.rejected, note: 'genuine copy', expect: ok('processed') },
  { event: a.available, expect: ok('processed') },
  { event: b.payout, note: 'newer update first', expect: ok('processed') },
  { event: b.available, note: 'older update after newer', expect: ok('stale') },
  {
    event: a.payout,
    note: 'signed 10 min ago',
    signedAt: nowSeconds() - 600,
    expect: refused('timestamp_outside_tolerance'),
  },
  // A refused delivery is not marked handled, so the service's next attempt still counts.
  { event: a.payout, note: 'retry (attempt 2)', attempt: 2, expect: ok('processed') },
]

const describe = (e: WebhookEvent) =>
  e.type === 'webhook.test'
    ? e.type
    : `${e.type} ${e.data.conversion.id} ${e.data.conversion.status}`

// An error body carries only its code; the status says which outcome it was.
const outcomeOf = (status: number, body: { outcome?: Outcome }): Outcome =>
  body.outcome ?? (status === 409 ? 'in_progress' : status >= 500 ? 'failed' : 'rejected')

let mismatches = 0
const deliveries: string[][] = []
for (const [i, step] of steps.entries()) {
  // The service signs every attempt afresh, so a duplicate carries a new signature.
  const { headers, body } = await signedDelivery({
    secret,
    event: step.event,
    attempt: step.attempt ?? 1,
    timestamp: step.signedAt ?? nowSeconds(),
  })
  const res = await fetch(url, { method: 'POST', headers, body: step.tamper?.(body) ?? body })
  const answer = (await res.json()) as { outcome?: Outcome; error?: { code: string } }
  const outcome = outcomeOf(res.status, answer)
  const code = answer.error?.code ?? ''
  const { expect } = step
  const matched =
    res.status === expect.status && outcome === expect.outcome && code === (expect.code ?? '')
  if (!matched) mismatches++
  deliveries.push([
    String(i + 1),
    describe(step.event),
    step.note ?? '',
    String(res.status),
    outcome,
    code,
    `${expect.status} ${expect.code ?? expect.outcome}`,
    matched ? 'ok' : 'MISMATCH',
  ])
}

server.close()
await once(server, 'close')

// Each conversion must end in the status of its newest genuine event, whatever the arrival order.
const newest = new Map<number, { createdAt: string; conversion: Conversion }>()
for (const { event: e } of steps) {
  if (e.type === 'webhook.test') continue
  const seen = newest.get(e.data.conversion.id)
  if (seen === undefined || e.createdAt > seen.createdAt) {
    newest.set(e.data.conversion.id, { createdAt: e.createdAt, conversion: e.data.conversion })
  }
}
const stored: string[][] = []
for (const [id, { conversion: want }] of newest) {
  const row = conversionsTable.get(id)
  const matched = row?.status === want.status && row.commission === want.commission
  if (!matched) mismatches++
  stored.push([
    String(id),
    row?.status ?? '(missing)',
    row ? `${row.commission} ${row.currency}` : '',
    matched ? 'ok' : `MISMATCH (expected ${want.status} ${want.commission})`,
  ])
}

function printTable(title: string, header: string[], rows: string[][]) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd()
  console.log(`\n${title}\n`)
  console.log(line(header))
  console.log(line(widths.map((w) => '-'.repeat(w))))
  for (const row of rows) console.log(line(row))
}

printTable(
  `Deliveries to ${url}`,
  ['#', 'sent', 'note', 'HTTP', 'outcome', 'error', 'expect', 'check'],
  deliveries,
)
printTable('Conversions table', ['id', 'status', 'commission', 'check'], stored)
console.log(
  mismatches === 0
    ? '\nAll answers and stored statuses are as expected.'
    : `\n${mismatches} unexpected result(s).`,
)
process.exitCode = mismatches === 0 ? 0 : 1

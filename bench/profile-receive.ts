/**
 * Where receive() + memoryStore spends its time: V8's CPU profiler (the one
 * `node --cpu-prof` starts) over a loop of distinct signed 294-byte events,
 * summed by self time per function and grouped by where the code lives.
 * PROFILE=verify profiles verifyEvent alone on the same events.
 *
 *   npm run build && node --import tsx bench/profile-receive.ts
 *   npm run build && PROFILE=verify node --import tsx bench/profile-receive.ts
 *
 * Prints a markdown table; bench/README.md shows the last one.
 */
import { Session } from 'node:inspector/promises'
import type * as Core from '@affiliate-webhooks/core'
import type * as Testing from '@affiliate-webhooks/core/testing'

const dist = (path: string): string =>
  new URL(`../packages/core/dist/${path}`, import.meta.url).href
const core = (await import(dist('node/index.js'))) as typeof Core
const testing = (await import(dist('node/testing.js'))) as typeof Testing

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
const EVENTS = 60_000

const inputs: { headers: Record<string, string>; rawBody: Buffer }[] = []
const createdAt = Date.now()
for (let i = 0; i < EVENTS; i++) {
  const event = testing.buildConversionEvent({
    id: `evt_${(0x5a17c0de0000 + i).toString(16).padStart(24, '0')}`,
    createdAt,
    conversion: { id: 48_210_000 + i, programId: 1042, channelId: 7781 },
  })
  const { headers, body } = await testing.signedDelivery({ secret: SECRET, event })
  // Flat header strings, as an HTTP server hands them over (see verify.bench.ts).
  const flatHeaders = Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name, Buffer.from(value).toString('latin1')]),
  )
  inputs.push({ headers: flatHeaders, rawBody: Buffer.from(body, 'utf8') })
}

const receiver = core.createReceiver({
  secret: SECRET,
  onConversion: () => {},
  store: core.memoryStore(),
})
const VERIFY = process.env.PROFILE === 'verify'
const WHAT = VERIFY ? 'verifyEvent' : 'receive() + memoryStore'
let processed = 0
/** One delivery through what is profiled. */
async function step(input: (typeof inputs)[number]): Promise<void> {
  if (VERIFY) {
    const event = await core.verifyEvent({ secret: SECRET, ...input })
    if (event.id.length > 0) processed++
    return
  }
  const answer = await receiver.receive(input)
  if (answer.outcome !== 'processed') throw new Error(`unexpected ${answer.outcome}`)
  processed++
}

// Warm-up on the first quarter (JIT), profile the rest.
const warm = EVENTS / 4
for (let i = 0; i < warm; i++) await step(inputs[i] as (typeof inputs)[number])

const session = new Session()
session.connect()
await session.post('Profiler.enable')
await session.post('Profiler.setSamplingInterval', { interval: 50 })
await session.post('Profiler.start')
for (let i = warm; i < EVENTS; i++) await step(inputs[i] as (typeof inputs)[number])
const { profile } = await session.post('Profiler.stop')
session.disconnect()

// Self time per node, from the samples and their time deltas.
const selfMicros = new Map<number, number>()
const { samples = [], timeDeltas = [] } = profile
for (let i = 0; i < samples.length; i++) {
  const id = samples[i] as number
  selfMicros.set(id, (selfMicros.get(id) ?? 0) + (timeDeltas[i] ?? 0))
}
const total = [...selfMicros.values()].reduce((a, b) => a + b, 0)

/** Where a function lives, in words a reader of this repository knows. */
function area(url: string, name: string): string {
  if (name === '(garbage collector)') return 'garbage collection'
  if (name === '(idle)' || name === '(program)') return 'V8 / idle'
  if (url.includes('/packages/core/dist/')) return 'core'
  if (url.startsWith('node:') || url === '') return 'Node internals, crypto, JSON'
  if (url.includes('bench/')) return 'bench loop'
  return 'other'
}

const byFunction = new Map<string, { micros: number; area: string }>()
for (const node of profile.nodes) {
  const micros = selfMicros.get(node.id) ?? 0
  if (micros === 0) continue
  const { functionName, url, lineNumber } = node.callFrame
  const name = functionName || '(anonymous)'
  const file = url.split('/').slice(-2).join('/')
  const key = `${name} ${file ? `(${file}:${lineNumber + 1})` : ''}`.trim()
  const entry = byFunction.get(key) ?? { micros: 0, area: area(url, name) }
  entry.micros += micros
  byFunction.set(key, entry)
}
const byArea = new Map<string, number>()
for (const { micros, area: a } of byFunction.values()) byArea.set(a, (byArea.get(a) ?? 0) + micros)

const profiled = EVENTS - warm
const perEvent = (micros: number) => (micros / profiled).toFixed(2)
const share = (micros: number) => `${((micros / total) * 100).toFixed(1)} %`
const out: string[] = []
out.push(
  `${WHAT}, ${profiled.toLocaleString('en-US')} distinct events profiled (${processed.toLocaleString('en-US')} in all), Node ${process.version}: ${perEvent(total)} µs per event in all`,
  '',
)
out.push('| where | share | µs per event |', '|---|---:|---:|')
for (const [a, micros] of [...byArea].sort((x, y) => y[1] - x[1])) {
  out.push(`| ${a} | ${share(micros)} | ${perEvent(micros)} |`)
}
out.push('', '| function (self time) | where | share | µs per event |', '|---|---|---:|---:|')
for (const [key, { micros, area: a }] of [...byFunction]
  .sort((x, y) => y[1].micros - x[1].micros)
  .slice(0, 15)) {
  out.push(`| \`${key}\` | ${a} | ${share(micros)} | ${perEvent(micros)} |`)
}
process.stdout.write(`${out.join('\n')}\n`)

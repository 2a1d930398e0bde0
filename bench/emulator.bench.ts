/**
 * The emulator's delivery engine against a local receiver: deliveries per second
 * (each one signed, sent over HTTP, answered, recorded), beside a floor measured
 * in the same run: plain POSTs of the same body to the same receiver at the same
 * concurrency, with fetch and with node:http on a keep-alive agent (the transport
 * the engine uses, so that ratio is the engine's own cost). The goal is at least
 * 2,000 deliveries/s.
 *
 * Run with `npm run bench:emulator` (builds first; uses the built package).
 */
import { once } from 'node:events'
import { Agent, createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { performance } from 'node:perf_hooks'
import type * as Testing from '@affiliate-webhooks/core/testing'
import type * as EmulatorPackage from '@affiliate-webhooks/emulator'
import { writeResults } from './results.js'

const built = (path: string) => new URL(`../packages/${path}`, import.meta.url).href
const { createEmulator } = (await import(built('emulator/dist/index.js'))) as typeof EmulatorPackage
const testing = (await import(built('core/dist/node/testing.js'))) as typeof Testing

const GOAL = 2_000
const CONCURRENCY = 50
const CONVERSIONS = 2_000
const ENDPOINTS = 5
const ROUNDS = 3

// The receiver: reads the body and answers 200 with a small JSON, as a receiver does.
const receiver = createServer((req, res) => {
  req.resume()
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end('{"received":true,"outcome":"processed"}')
  })
})
receiver.listen(0, '127.0.0.1')
await once(receiver, 'listening')
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`

async function emulatorRun(): Promise<{ deliveries: number; perSecond: number; body: string }> {
  const total = CONVERSIONS * ENDPOINTS
  let done = 0
  let failed = 0
  let resolveDone: () => void = () => {}
  const finished = new Promise<void>((resolve) => {
    resolveDone = resolve
  })
  const emulator = createEmulator({
    concurrency: CONCURRENCY,
    // The loop's throughput, not the wait for the next minute batch.
    batchIntervalMs: 0,
    onAttempt(entry) {
      if (!entry.ok) failed++
      if (++done === total) resolveDone()
    },
  })
  const { engine } = emulator
  for (let i = 0; i < ENDPOINTS; i++) {
    engine.addEndpoint({ url: receiverUrl, events: ['conversion.created'], description: null })
  }
  const conversion = (id: number) =>
    testing.buildConversionEvent({ conversion: { id } }).data.conversion
  const started = performance.now()
  for (let id = 1; id <= CONVERSIONS; id++) engine.emitConversion(conversion(id))
  await finished
  const seconds = (performance.now() - started) / 1000
  const body = engine.snapshot().deliveries[0]?.body ?? '{}'
  await emulator.close()
  if (failed > 0) throw new Error(`${failed} deliveries failed`)
  return { deliveries: total, perSecond: total / seconds, body }
}

/** Runs `post` `requests` times, CONCURRENCY at a time; resolves to requests per second. */
async function drive(requests: number, post: () => Promise<void>): Promise<number> {
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < requests) {
        next++
        await post()
      }
    }),
  )
  return requests / ((performance.now() - started) / 1000)
}

async function fetchFloor(body: string, requests: number): Promise<number> {
  const headers = {
    'content-type': 'application/json',
    'service-event-id': 'evt_000000000000000000000000',
    'service-delivery-attempt': '1',
    'service-signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}`,
  }
  return drive(requests, async () => {
    const response = await fetch(receiverUrl, { method: 'POST', headers, body })
    await response.text()
    if (!response.ok) throw new Error(`floor: ${response.status}`)
  })
}

async function httpFloor(body: string, requests: number): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY })
  const headers = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
  }
  const post = () =>
    new Promise<void>((resolve, reject) => {
      const req = request(receiverUrl, { method: 'POST', headers, agent }, (res) => {
        res.resume()
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error('floor'))))
      })
      req.on('error', reject)
      req.end(body)
    })
  const perSecond = await drive(requests, post)
  agent.destroy()
  return perSecond
}

// Warm-up of each, then the best of a few rounds of each, interleaved.
const warm = await emulatorRun()
await fetchFloor(warm.body, 2_000)
await httpFloor(warm.body, 2_000)
let best = 0
let floor = 0
let httpBest = 0
for (let round = 0; round < ROUNDS; round++) {
  best = Math.max(best, (await emulatorRun()).perSecond)
  floor = Math.max(floor, await fetchFloor(warm.body, CONVERSIONS * ENDPOINTS))
  httpBest = Math.max(httpBest, await httpFloor(warm.body, CONVERSIONS * ENDPOINTS))
}
receiver.close()

const fmt = (n: number) => Math.round(n).toLocaleString('en-US')
const ratio = (a: number, b: number) => (a / b).toFixed(2)
const rows = [
  ['floor: fetch POSTs of the same body to the same receiver', floor],
  ['floor: node:http keep-alive POSTs, same body, same receiver', httpBest],
  ['emulator deliveries (signed, sent, answered, recorded)', best],
] as const
console.log(
  `Node ${process.version}, ${CONVERSIONS * ENDPOINTS} deliveries a round (${CONVERSIONS} conversions x ${ENDPOINTS} endpoints), concurrency ${CONCURRENCY}, best of ${ROUNDS}\n`,
)
console.log('| what | per second | vs fetch floor | vs node:http floor |')
console.log('| --- | ---: | ---: | ---: |')
for (const [what, perSecond] of rows) {
  console.log(
    `| ${what} | ${fmt(perSecond)} | ${ratio(perSecond, floor)} | ${ratio(perSecond, httpBest)} |`,
  )
}
console.log(`\ngoal >= ${fmt(GOAL)} deliveries/s: ${best >= GOAL ? 'met' : 'NOT met'}`)
writeResults('emulator', {
  ratios: {
    'emulator deliveries / fetch floor': best / floor,
    'emulator deliveries / node:http floor': best / httpBest,
  },
  targets: { [`deliveries/s >= ${GOAL}`]: best },
})
if (best < GOAL) process.exitCode = 1

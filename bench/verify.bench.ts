/**
 * Verification throughput of the built @affiliate-webhooks/core against the floor
 * (the least work any correct receiver must do), Stripe's constructEvent and
 * @octokit/webhooks' verify on the same bodies.
 *
 * Run with `npm run bench`. One process, interleaved rounds with the order rotated
 * each round, median ops/s per case; targets are reported, never asserted. The
 * ratios go to bench/results/verify.json and the table into bench/README.md.
 *
 * BENCH_QUICK=1 runs tiny rounds (seconds, meaningless figures) and BENCH_RESULTS
 * names another JSON file: test/packaging/bench-guard.test.ts checks that way that every
 * ratio is still produced.
 */
import { createHmac, createSecretKey, hash, timingSafeEqual } from 'node:crypto'
import { cpus } from 'node:os'
import type * as Core from '@affiliate-webhooks/core'
import type * as Testing from '@affiliate-webhooks/core/testing'
import { Webhooks } from '@octokit/webhooks'
import Stripe from 'stripe'
import { updateReadme, writeResults } from './results.js'

// The built packages, as users get them. The specifier is computed so the type
// checker takes the types from the source (dist/web ships no .d.ts of its own).
const dist = (path: string): string =>
  new URL(`../packages/core/dist/${path}`, import.meta.url).href
const nodeCore = (await import(dist('node/index.js'))) as typeof Core
const webCore = (await import(dist('web/index.js'))) as typeof Core
const testing = (await import(dist('node/testing.js'))) as typeof Testing

const QUICK = process.env.BENCH_QUICK === '1'
const ROUNDS = QUICK ? 2 : 15
/** Wall time each case gets per round, once calibrated. */
const ROUND_MS = QUICK ? 5 : 150
/** Wall time each case runs while warming up (JIT) and calibrating. */
const WARMUP_MS = QUICK ? 10 : 400
/** Distinct signed events for receive(), which de-duplicates by event id. */
const POOL_SIZE = QUICK ? 1_000 : 40_000
/** Signatures are re-made before they get near the 300 s tolerance. */
const RESIGN_AFTER_S = 200

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
const secretKey = createSecretKey(Buffer.from(SECRET, 'utf8'))

const SIZES = [
  { key: '300B', label: '~300 B', target: 0 },
  { key: '10KB', label: '~10 KB', target: 10 * 1024 },
  // Below the default 1 MiB maxBodyBytes, so the core accepts it.
  { key: '1MB', label: '~1 MB', target: 1_000_000 },
] as const
type SizeKey = (typeof SIZES)[number]['key']

// ---------------------------------------------------------------------------
// Fixtures: signed deliveries as the service sends them.

interface Fixture {
  body: Buffer
  headers: Record<string, string>
  /** The Service-Signature value, `t=...,v1=...`. */
  signature: string
  /** `${t}.`, what is signed ahead of the body. */
  prefix: string
  /** The v1 value, hex. */
  v1: string
  /** The same body signed as GitHub signs it (`sha256=` HMAC of the body), for Octokit. */
  githubSignature: string
}

const PAD_TEXT = 'Order 4711 for 3 items, shipped to DE; campaign spring-sale; '

/** A conversion.created event as the spec shapes it; padded with data.note up to `target` bytes. */
function eventBody(index: number, createdAt: number, target: number): string {
  const event = testing.buildConversionEvent({
    id: `evt_${(0x5a17c0de0000 + index).toString(16).padStart(24, '0')}`,
    createdAt,
    conversion: { id: 48_210_000 + index, programId: 1042, channelId: 7781 },
  })
  if (target === 0) return JSON.stringify(event)
  const padded = { ...event, data: { ...event.data, note: '' } }
  const missing = target - Buffer.byteLength(JSON.stringify(padded))
  padded.data.note = PAD_TEXT.repeat(Math.ceil(missing / PAD_TEXT.length)).slice(0, missing)
  return JSON.stringify(padded)
}

/**
 * The header values as an HTTP server hands them over: each one flat string read
 * from the bytes, not the joined-up (cons) string the signing helper built, which
 * V8 would flatten on first read, at the receiver's cost.
 */
const flat = (headers: Record<string, string>): Record<string, string> =>
  Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name, Buffer.from(value).toString('latin1')]),
  )

async function sign(body: string, timestamp: number): Promise<Fixture> {
  const delivery = await testing.signedDelivery({ secret: SECRET, event: body, timestamp })
  const signature = delivery.headers['service-signature'] as string
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(signature)
  if (match === null) throw new Error(`unexpected signature header: ${signature}`)
  return {
    body: Buffer.from(delivery.body, 'utf8'),
    headers: flat(delivery.headers),
    signature,
    prefix: `${match[1]}.`,
    v1: match[2] as string,
    githubSignature: `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`,
  }
}

const single = new Map<SizeKey, Fixture>()
let pool: Fixture[] = []
let signedAt = 0

async function signAll(): Promise<void> {
  signedAt = Math.floor(Date.now() / 1000)
  const createdAt = Date.now()
  for (const size of SIZES) {
    single.set(size.key, await sign(eventBody(0, createdAt, size.target), signedAt))
  }
  const fresh: Fixture[] = []
  // Every event has its own id and its own conversion, so none is a duplicate or stale.
  for (let i = 1; i <= POOL_SIZE; i++) fresh.push(await sign(eventBody(i, createdAt, 0), signedAt))
  pool = fresh
}

const fixture = (size: SizeKey): Fixture => single.get(size) as Fixture

// ---------------------------------------------------------------------------
// The cases.

let sink = 0

/** The floor: what any correct receiver must do, and nothing else. */
function floorOp(f: Fixture): void {
  const actual = createHmac('sha256', secretKey).update(f.prefix).update(f.body).digest()
  if (!timingSafeEqual(actual, Buffer.from(f.v1, 'hex'))) throw new Error('floor: no match')
  const event = JSON.parse(f.body.toString('utf8')) as { id: string }
  sink += event.id.length
}

/**
 * The floor's HMAC done as the node build does it for small bodies: two one-shot
 * hashes over the key's pads (RFC 2104), each digest taken as a latin1 (binary) string.
 * Not the floor (which is what a receiver written the usual way does), but shown
 * beside it so the ratio says how much of verifyEvent's lead is that HMAC.
 */
const PAD_KEY = Buffer.alloc(64)
Buffer.from(SECRET, 'utf8').copy(PAD_KEY)
const INNER_PAD = PAD_KEY.map((byte) => byte ^ 0x36)
const OUTER = Buffer.alloc(96)
for (let i = 0; i < 64; i++) OUTER[i] = (PAD_KEY[i] as number) ^ 0x5c
const MAC = Buffer.alloc(32)
function oneShotFloorOp(f: Fixture): void {
  const message = Buffer.allocUnsafe(64 + f.prefix.length + f.body.byteLength)
  message.set(INNER_PAD, 0)
  message.set(f.body, 64 + message.write(f.prefix, 64, 'latin1'))
  OUTER.write(hash('sha256', message, 'binary'), 64, 'latin1')
  MAC.write(hash('sha256', OUTER, 'binary'), 0, 'latin1')
  if (!timingSafeEqual(MAC, Buffer.from(f.v1, 'hex'))) throw new Error('one-shot floor: no match')
  const event = JSON.parse(f.body.toString('utf8')) as { id: string }
  sink += event.id.length
}

interface Case {
  name: string
  size: SizeKey
  /** The name of the floor this case is compared with (itself for a floor). */
  floor: string
  /** Runs `n` operations; awaited ones one after another, as a server does. */
  run: (n: number) => unknown
  /** Called untimed before every run. */
  before?: () => void
  /** Most operations one run may do. */
  cap?: number
  ops: number
  samples: number[]
}

const cases: Case[] = []
const addCase = (c: Omit<Case, 'ops' | 'samples'>) => cases.push({ ...c, ops: 1, samples: [] })

const floorName = (size: SizeKey) => `floor ${size}`

for (const { key: size } of SIZES) {
  const floor = floorName(size)
  addCase({
    name: floor,
    size,
    floor,
    run(n) {
      const f = fixture(size)
      for (let i = 0; i < n; i++) floorOp(f)
    },
  })
  addCase({
    name: 'verifyEvent (node build)',
    size,
    floor,
    async run(n) {
      const f = fixture(size)
      for (let i = 0; i < n; i++) {
        const event = await nodeCore.verifyEvent({
          secret: SECRET,
          rawBody: f.body,
          headers: f.headers,
        })
        sink += event.id.length
      }
    },
  })
  addCase({
    name: 'verifyEvent (web build)',
    size,
    floor,
    async run(n) {
      const f = fixture(size)
      for (let i = 0; i < n; i++) {
        const event = await webCore.verifyEvent({
          secret: SECRET,
          rawBody: f.body,
          headers: f.headers,
        })
        sink += event.id.length
      }
    },
  })
  addCase({
    name: 'Stripe constructEvent',
    size,
    floor,
    run(n) {
      const f = fixture(size)
      for (let i = 0; i < n; i++) {
        const event = Stripe.webhooks.constructEvent(f.body, f.signature, SECRET)
        sink += event.id.length
      }
    },
  })
}

addCase({
  name: 'floor with the one-shot HMAC',
  size: '300B',
  floor: floorName('300B'),
  run(n) {
    const f = fixture('300B')
    for (let i = 0; i < n; i++) oneShotFloorOp(f)
  },
})

const octokit = new Webhooks({ secret: SECRET })
for (const { key: size } of SIZES) {
  addCase({
    name: 'Octokit webhooks.verify + JSON.parse',
    size,
    floor: floorName(size),
    async run(n) {
      const f = fixture(size)
      for (let i = 0; i < n; i++) {
        // Octokit takes the body as a string, so the decoding is part of its cost.
        const text = f.body.toString('utf8')
        if (!(await octokit.verify(text, f.githubSignature))) throw new Error('octokit: no match')
        sink += (JSON.parse(text) as { id: string }).id.length
      }
    },
  })
}

// receive() must see a new event every time, so it and its floor walk the same
// pool of distinct events from the start, with a new receiver and store per run.
const POOL_FLOOR = 'floor 300B, distinct events'
let receiver: Core.Receiver | undefined
let notProcessed = 0
addCase({
  name: POOL_FLOOR,
  size: '300B',
  floor: POOL_FLOOR,
  cap: POOL_SIZE,
  run(n) {
    for (let i = 0; i < n; i++) floorOp(pool[i] as Fixture)
  },
})
/** receive() over the pool of distinct events, with the memory store and `extra` options. */
function receiveCase(name: string, extra: Partial<Core.ReceiverOptions>): void {
  addCase({
    name,
    size: '300B',
    floor: POOL_FLOOR,
    cap: POOL_SIZE,
    before() {
      receiver = nodeCore.createReceiver({
        secret: SECRET,
        onConversion: () => {},
        store: nodeCore.memoryStore(),
        ...extra,
      })
    },
    async run(n) {
      const r = receiver as Core.Receiver
      for (let i = 0; i < n; i++) {
        const f = pool[i] as Fixture
        const result = await r.receive({ rawBody: f.body, headers: f.headers })
        if (result.outcome !== 'processed') notProcessed++
      }
    },
  })
}
receiveCase('receive() + memoryStore, distinct events', {})
receiveCase('receive() + memoryStore, telemetry: false', { telemetry: false })

// ---------------------------------------------------------------------------
// The harness.

/** Seconds one run of `n` operations takes, GC done beforehand and untimed. */
async function timeRun(c: Case, n: number): Promise<number> {
  c.before?.()
  globalThis.gc?.()
  const start = process.hrtime.bigint()
  const pending = c.run(n)
  if (pending instanceof Promise) await pending
  return Number(process.hrtime.bigint() - start) / 1e9
}

/** Warms the case up and sets its per-round operation count to about ROUND_MS. */
async function calibrate(c: Case): Promise<void> {
  const cap = c.cap ?? Number.POSITIVE_INFINITY
  let n = 1
  let spent = 0
  let rate = 0
  while (spent < WARMUP_MS / 1000) {
    const seconds = await timeRun(c, n)
    spent += seconds
    rate = n / seconds
    if (seconds < 0.05 && n < cap) n = Math.min(cap, n * 2)
  }
  c.ops = Math.max(3, Math.min(cap, Math.round((rate * ROUND_MS) / 1000)))
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

const quantile = (values: readonly number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number
}

async function main(): Promise<void> {
  await signAll()

  // Every candidate must accept the input before it is timed.
  for (const c of cases) await timeRun(c, 1)
  if (notProcessed > 0) throw new Error('receive() did not process a fresh event')

  for (const c of cases) await calibrate(c)

  for (let round = 0; round < ROUNDS; round++) {
    if (Date.now() / 1000 - signedAt > RESIGN_AFTER_S) await signAll()
    for (let k = 0; k < cases.length; k++) {
      const c = cases[(round + k) % cases.length] as Case
      c.samples.push(c.ops / (await timeRun(c, c.ops)))
    }
  }
  if (notProcessed > 0) {
    throw new Error(`receive() answered something other than processed ${notProcessed} times`)
  }
  report()
}

// ---------------------------------------------------------------------------
// The report.

const byName = (name: string, size: SizeKey): Case => {
  const found = cases.find((c) => c.name === name && c.size === size)
  if (found === undefined) throw new Error(`no case ${name} at ${size}`)
  return found
}
const opsPerSecond = (c: Case) => median(c.samples)
const ratioToFloor = (c: Case) => opsPerSecond(c) / opsPerSecond(byName(c.floor, c.size))

const formatOps = (value: number) =>
  value >= 100 ? Math.round(value).toLocaleString('en-US') : value.toFixed(1)
const formatBytes = (bytes: number) =>
  bytes >= 1024 * 1024
    ? `${(bytes / (1024 * 1024)).toFixed(2)} MiB (${bytes.toLocaleString('en-US')} B)`
    : bytes >= 1024
      ? `${(bytes / 1024).toFixed(1)} KiB (${bytes.toLocaleString('en-US')} B)`
      : `${bytes} B`

function report(): void {
  const poolBytes = pool.map((f) => f.body.byteLength)
  const [poolMin, poolMax] = [Math.min(...poolBytes), Math.max(...poolBytes)]
  const poolText = poolMin === poolMax ? `${poolMin} B` : `${poolMin}-${poolMax} B`
  const sizeText = (c: Case): string =>
    c.cap === undefined
      ? formatBytes(fixture(c.size).body.byteLength)
      : `${poolText} x ${POOL_SIZE.toLocaleString('en-US')}`

  const out: string[] = []
  out.push('# @affiliate-webhooks/core verification benchmark (built dist)', '')
  out.push(
    `Node ${process.version} (${process.platform} ${process.arch}), ${cpus().length} x ${cpus()[0]?.model ?? 'unknown CPU'}`,
  )
  out.push(
    `Command: npm run bench -> npm run build --silent && node ${process.execArgv.join(' ')} bench/verify.bench.ts`,
  )
  out.push(
    `Method: ${ROUNDS} interleaved rounds, case order rotated each round, ~${ROUND_MS} ms per case per round after a ${WARMUP_MS} ms warm-up; ops/s is the median across rounds, ratio = median / median of the floor at the same size. Async cases are awaited one op at a time.`,
  )
  out.push(
    'Floor: createHmac(KeyObject).update(`t.`).update(body).digest() + timingSafeEqual against Buffer.from(v1, "hex") + JSON.parse(body.toString()), header parsing excluded.',
  )
  out.push('')
  out.push('| case | size | ops/s | ratio to floor |')
  out.push('|---|---|---:|---:|')
  const order = [...SIZES.map((s) => s.key)]
  const rows = [...cases].sort(
    (a, b) =>
      order.indexOf(a.size) - order.indexOf(b.size) ||
      Number(a.cap !== undefined) - Number(b.cap !== undefined),
  )
  for (const c of rows) {
    const name = c.name === c.floor ? `**${c.name}**` : c.name
    out.push(
      `| ${name} | ${sizeText(c)} | ${formatOps(opsPerSecond(c))} | ${ratioToFloor(c).toFixed(2)} |`,
    )
  }

  const spread = rows.map((c) => {
    const m = median(c.samples)
    return { c, iqr: (quantile(c.samples, 0.75) - quantile(c.samples, 0.25)) / m }
  })
  const worst = spread.reduce((a, b) => (b.iqr > a.iqr ? b : a))
  out.push('')
  out.push(
    `Round-to-round spread (IQR / median): typically ${(median(spread.map((s) => s.iqr)) * 100).toFixed(1)}%, worst ${(worst.iqr * 100).toFixed(1)}% (${worst.c.name} ${worst.c.size}).`,
  )

  const verify300 = byName('verifyEvent (node build)', '300B')
  const verify1M = byName('verifyEvent (node build)', '1MB')
  const receive = byName('receive() + memoryStore, distinct events', '300B')
  const stripe300 = opsPerSecond(byName('Stripe constructEvent', '300B'))
  const oneShot300 = opsPerSecond(byName('floor with the one-shot HMAC', '300B'))
  const targets: [string, number, number][] = [
    ['verifyEvent >= 0.90 x floor at ~300 B', ratioToFloor(verify300), 0.9],
    ['verifyEvent >= 0.90 x floor at ~1 MB', ratioToFloor(verify1M), 0.9],
    ['receive() >= 0.70 x floor (~300 B, distinct events)', ratioToFloor(receive), 0.7],
    [
      'verifyEvent >= 1.3 x Stripe constructEvent at ~300 B',
      opsPerSecond(verify300) / stripe300,
      1.3,
    ],
    ['receive() >= 1.3 x Stripe constructEvent at ~300 B', opsPerSecond(receive) / stripe300, 1.3],
    [
      'verifyEvent / the floor with the same one-shot HMAC at ~300 B (what the rest of verifyEvent costs)',
      opsPerSecond(verify300) / oneShot300,
      0,
    ],
    [
      'receive() with the API loaded, no SDK / telemetry: false (1.00 = no cost)',
      opsPerSecond(receive) /
        opsPerSecond(byName('receive() + memoryStore, telemetry: false', '300B')),
      0.97,
    ],
  ]
  out.push('', `Targets on Node ${process.version} (reported, not asserted):`)
  for (const [label, value, goal] of targets) {
    out.push(
      `- ${label}: ${value.toFixed(2)} on Node ${process.version}${goal === 0 ? ' (no goal: for reading)' : value >= goal ? ' -> MET' : ' -> NOT MET'}`,
    )
  }
  out.push('', `Total runtime: ${process.uptime().toFixed(1)} s (this process; build excluded)`)
  // Keeps the results observable so no work above can be optimised away.
  if (sink === -1) out.push('')
  process.stdout.write(`${out.join('\n')}\n`)

  const ratios: Record<string, number> = {}
  for (const c of rows) if (c.name !== c.floor) ratios[`${c.name} @ ${c.size}`] = ratioToFloor(c)
  writeResults(
    'verify',
    { ratios, targets: Object.fromEntries(targets.map(([label, value]) => [label, value])) },
    QUICK,
  )
  // The report's own heading stays out of the README section, which has one.
  updateReadme(
    'verify',
    out.filter((line) => !line.startsWith('# ')),
    QUICK,
  )
}

await main()

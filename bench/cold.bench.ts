/**
 * Cold start: what each adapter's one-line use costs a fresh process before the
 * first event, beside a bare handler of the same shape (node:crypto HMAC, or Web
 * Crypto for the Workers bundle) in the same run.
 *
 * Each entry is bundled with esbuild, as a Lambda, Vercel or Workers deploy
 * bundles it, and imported in a fresh `node --expose-gc` process: the time of the
 * `import()` (which evaluates the bundle and creates the receiver, with the
 * default memory store) and the heap it leaves after a full GC. Samples of all
 * entries are interleaved; the median of each is reported. Apart, in fresh
 * processes too: `createReceiver` alone, the core already imported (target: at
 * most 1 ms and 1 MB before the first event).
 *
 * Run with `npm run bench:cold`. Targets are reported, never asserted; the
 * results go to bench/results/cold.json. BENCH_QUICK=1 takes 2 samples each and
 * BENCH_RESULTS names another file (test/packaging/bench-guard.test.ts).
 */
import { execFile } from 'node:child_process'
import { mkdirSync, rmSync, statSync } from 'node:fs'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { build } from 'esbuild'
import { updateReadme, writeResults } from './results.js'

const exec = promisify(execFile)
const root = fileURLToPath(new URL('..', import.meta.url))
const QUICK = process.env.BENCH_QUICK === '1'
const SAMPLES = QUICK ? 2 : 15
/** Inside node_modules, so a bundle resolves what it leaves external like the app would. */
const OUT = join(root, 'node_modules', '.cache', `aw-cold-bench-${process.pid}`)
/** Farther than this from the bare handler is a miss. */
const MISS_MS = 15
const LAMBDA_RATIO =
  'lambda whole cold start: adapter / bare handler loading node:crypto, CPU <= 1.1x'

const OPTIONS =
  '{ secret: process.env.BENCH_SECRET, onConversion: (c) => { rows.set(c.id, c.status) } }'
const ROWS = 'const rows = new Map()'

/** A bare handler: HMAC of `t.` + body, compared in constant time, answer. */
const BARE_NODE = `
import { createHmac, timingSafeEqual } from 'node:crypto'
const secret = process.env.BENCH_SECRET
export function verify(header, body) {
  const t = /(?:^|,)\\s*t=(\\d+)/.exec(header)?.[1]
  const v1 = /(?:^|,)\\s*v1=([0-9a-f]{64})/.exec(header)?.[1]
  if (t === undefined || v1 === undefined) return false
  const mac = createHmac('sha256', secret).update(t + '.').update(body).digest()
  return timingSafeEqual(mac, Buffer.from(v1, 'hex'))
}
`
const BARE_WEB = `
const secret = process.env.BENCH_SECRET
const key = crypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify'])
export async function verify(header, body) {
  const t = /(?:^|,)\\s*t=(\\d+)/.exec(header)?.[1]
  const v1 = /(?:^|,)\\s*v1=([0-9a-f]{64})/.exec(header)?.[1]
  if (t === undefined || v1 === undefined) return false
  const mac = new Uint8Array(v1.match(/../g).map((h) => parseInt(h, 16)))
  const data = new Uint8Array([...new TextEncoder().encode(t + '.'), ...body])
  return crypto.subtle.verify('HMAC', await key, mac, data)
}
`

const NODE_BARE = `${BARE_NODE}\nexport const handler = async (req, res) => { const chunks = []; for await (const c of req) chunks.push(c); res.statusCode = verify(req.headers['service-signature'], Buffer.concat(chunks)) ? 200 : 401; res.end() }`

interface Entry {
  name: string
  /** The adapter's one-line use, as its README shows it. */
  adapter: string
  /** The bare handler of the same shape. */
  bare: string
  /** Bundled for Workers (no `node` condition: the Web Crypto build). */
  worker?: boolean
}

const ENTRIES: Entry[] = [
  {
    name: 'lambda',
    adapter: `import { affiliateWebhook } from '@affiliate-webhooks/lambda'\n${ROWS}\nexport const handler = affiliateWebhook(${OPTIONS})`,
    bare: `${BARE_NODE}\nexport const handler = async (event) => verify(event.headers['service-signature'], Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8')) ? { statusCode: 200, body: '{"received":true}' } : { statusCode: 401, body: '' }`,
  },
  {
    name: 'web (Workers bundle)',
    worker: true,
    adapter: `import { affiliateWebhook } from '@affiliate-webhooks/web'\n${ROWS}\nexport default { fetch: affiliateWebhook(${OPTIONS}) }`,
    bare: `${BARE_WEB}\nexport default { fetch: async (request) => (await verify(request.headers.get('service-signature') ?? '', new Uint8Array(await request.arrayBuffer()))) ? new Response('{"received":true}') : new Response('', { status: 401 }) }`,
  },
  {
    name: 'next (App Router)',
    adapter: `import { affiliateWebhook } from '@affiliate-webhooks/next'\n${ROWS}\nexport const POST = affiliateWebhook(${OPTIONS})`,
    bare: `${BARE_NODE}\nexport const POST = async (request) => verify(request.headers.get('service-signature') ?? '', Buffer.from(await request.arrayBuffer())) ? Response.json({ received: true }) : new Response('', { status: 401 })`,
  },
  ...(['node', 'express', 'koa'] as const).map((name) => ({
    name,
    adapter: `import { affiliateWebhook } from '@affiliate-webhooks/${name}'\n${ROWS}\nexport const handler = affiliateWebhook(${OPTIONS})`,
    bare: NODE_BARE,
  })),
  {
    name: 'fastify',
    adapter: `import { affiliateWebhookHandler } from '@affiliate-webhooks/fastify'\n${ROWS}\nexport const handler = affiliateWebhookHandler(${OPTIONS})`,
    bare: `${BARE_NODE}\nexport const handler = async (request, reply) => reply.code(verify(request.headers['service-signature'], request.rawBody) ? 200 : 401).send()`,
  },
]

/** Imports one bundle in this (fresh) process: ms of the import, MB it leaves after GC. */
const IMPORT_ONE = `
// The module loader's own start-up, the same for every entry, is left out.
await import('data:text/javascript,export default 1')
const gc = globalThis.gc
gc(); const before = process.memoryUsage()
// Lets the collector's helper threads finish, so their CPU time is not counted.
await new Promise((resolve) => setTimeout(resolve, 30))
const started = performance.now()
const cpu = process.cpuUsage()
await import(process.env.BENCH_FILE)
const ms = performance.now() - started
const used = process.cpuUsage(cpu)
gc(); const after = process.memoryUsage()
const mb = (after.heapUsed - before.heapUsed + after.arrayBuffers - before.arrayBuffers) / 2 ** 20
process.stdout.write(JSON.stringify({ ms, cpuMs: (used.user + used.system) / 1000, mb }))
`

/**
 * The whole cold start, as a Lambda init phase: Node's own start, then the
 * bundle imported (and its receiver made). CPU of the process since it began, and
 * the wall time since its time origin.
 */
const START_ONE = `
await import(process.env.BENCH_FILE)
const used = process.cpuUsage()
process.stdout.write(JSON.stringify({ ms: performance.now(), cpuMs: (used.user + used.system) / 1000, mb: 0 }))
`

/** The core already imported: one createReceiver (or memoryStore) in a fresh process. */
const CREATE_ONE = `
const core = await import(process.env.BENCH_FILE)
const what = process.env.BENCH_WHAT
const gc = globalThis.gc
gc(); const before = process.memoryUsage()
// Lets the collector's helper threads finish, so their CPU time is not counted.
await new Promise((resolve) => setTimeout(resolve, 30))
// Both clocks read once before, so their own first call is not counted.
process.cpuUsage(process.cpuUsage())
performance.now()
const started = performance.now()
const cpu = process.cpuUsage()
const made = what === 'store' ? core.memoryStore() : core.createReceiver({ secret: process.env.BENCH_SECRET, onConversion() {} })
const ms = performance.now() - started
const used = process.cpuUsage(cpu)
gc(); const after = process.memoryUsage()
const mb = (after.heapUsed - before.heapUsed + after.arrayBuffers - before.arrayBuffers) / 2 ** 20
if (made === undefined) throw new Error('nothing made')
process.stdout.write(JSON.stringify({ ms, cpuMs: (used.user + used.system) / 1000, mb }))
`

interface Sample {
  /** Wall time. */
  ms: number
  /** This process's CPU time (user + system, all its threads) over the same span. */
  cpuMs: number
  mb: number
}

/** Bundles `source` as a deploy would; returns the file and its size. */
async function bundle(name: string, source: string, worker: boolean): Promise<string> {
  const outfile = join(OUT, `${name.replace(/\W+/g, '-')}.mjs`)
  await build({
    stdin: { contents: source, resolveDir: root, sourcefile: `${name}.js`, loader: 'js' },
    bundle: true,
    format: 'esm',
    platform: worker ? 'neutral' : 'node',
    ...(worker
      ? { conditions: ['workerd', 'worker', 'import'], mainFields: ['module', 'main'] }
      : {}),
    // The project's Node; the Workers bundle is not run by Node, but is measured on it.
    target: 'node24',
    outfile,
    logLevel: 'error',
  })
  return outfile
}

async function sample(script: string, file: string, what = ''): Promise<Sample> {
  const env = {
    ...process.env,
    BENCH_SECRET: 'whsec_cold_start_bench_secret',
    BENCH_FILE: pathToFileURL(file).href,
    BENCH_WHAT: what,
  }
  // The whole cold start is measured as a deploy runs it: no --expose-gc.
  const flags = script === START_ONE ? [] : ['--expose-gc']
  const { stdout } = await exec(process.execPath, [...flags, '--input-type=module', '-e', script], {
    cwd: root,
    env,
  })
  return JSON.parse(stdout) as Sample
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

interface Measured {
  name: string
  kb: { bare: number; adapter: number }
  bare: Sample[]
  adapter: Sample[]
}

/** Every entry's bare and adapter bundle, sampled interleaved in fresh processes. */
async function measureEntries(): Promise<Measured[]> {
  const measured: Measured[] = []
  const files: { bare: string; adapter: string }[] = []
  for (const entry of ENTRIES) {
    const worker = entry.worker === true
    const bare = await bundle(`${entry.name} bare`, entry.bare, worker)
    const adapter = await bundle(`${entry.name} adapter`, entry.adapter, worker)
    files.push({ bare, adapter })
    const kb = (file: string) => statSync(file).size / 1024
    measured.push({
      name: entry.name,
      kb: { bare: kb(bare), adapter: kb(adapter) },
      bare: [],
      adapter: [],
    })
  }
  for (let round = 0; round < SAMPLES; round++) {
    for (const [index, m] of measured.entries()) {
      const { bare, adapter } = files[index] as { bare: string; adapter: string }
      // Alternate which goes first, so neither always meets a warmer disk cache.
      const order =
        round % 2 === 0 ? (['bare', 'adapter'] as const) : (['adapter', 'bare'] as const)
      for (const kind of order) {
        m[kind].push(await sample(IMPORT_ONE, kind === 'bare' ? bare : adapter))
      }
    }
  }
  return measured
}

/** The Lambda entry's whole cold start, bare and adapter bundles interleaved. */
async function measureStart(): Promise<{ bare: Sample[]; adapter: Sample[] }> {
  const entry = ENTRIES.find((e) => e.name === 'lambda') as Entry
  const bare = await bundle('lambda start bare', entry.bare, false)
  const adapter = await bundle('lambda start adapter', entry.adapter, false)
  const samples = { bare: [] as Sample[], adapter: [] as Sample[] }
  for (let round = 0; round < SAMPLES; round++) {
    const order = round % 2 === 0 ? (['bare', 'adapter'] as const) : (['adapter', 'bare'] as const)
    for (const kind of order) {
      samples[kind].push(await sample(START_ONE, kind === 'bare' ? bare : adapter))
    }
  }
  return samples
}

async function measureCreate(): Promise<{ receiver: Sample[]; store: Sample[] }> {
  const core = join(root, 'packages/core/dist/node/index.js')
  const receiver: Sample[] = []
  const store: Sample[] = []
  for (let round = 0; round < SAMPLES; round++) {
    receiver.push(await sample(CREATE_ONE, core, 'receiver'))
    store.push(await sample(CREATE_ONE, core, 'store'))
  }
  return { receiver, store }
}

const f1 = (value: number) => value.toFixed(1)
const f2 = (value: number) => value.toFixed(2)

const med = (samples: readonly Sample[], key: keyof Sample) => median(samples.map((s) => s[key]))

/** One table row per entry; its figures go to `ratios`, its verdict to `targets`. */
function entryRow(m: Measured, ratios: Record<string, number>, targets: Record<string, number>) {
  const [wallBare, wallAdapter] = [med(m.bare, 'ms'), med(m.adapter, 'ms')]
  const [cpuBare, cpuAdapter] = [med(m.bare, 'cpuMs'), med(m.adapter, 'cpuMs')]
  const [mbBare, mbAdapter] = [med(m.bare, 'mb'), med(m.adapter, 'mb')]
  const delta = cpuAdapter - cpuBare
  ratios[`${m.name}: adapter / bare, CPU ms`] = cpuAdapter / cpuBare
  ratios[`${m.name}: adapter / bare, wall ms`] = wallAdapter / wallBare
  ratios[`${m.name}: adapter - bare, CPU ms`] = delta
  ratios[`${m.name}: adapter - bare, wall ms`] = wallAdapter - wallBare
  ratios[`${m.name}: adapter - bare, MB after GC`] = mbAdapter - mbBare
  targets[`${m.name}: adapter - bare <= ${MISS_MS} ms (CPU)`] = delta
  return `| ${m.name} | ${f1(cpuBare)} | ${f1(cpuAdapter)} | ${f1(delta)} | ${f2(cpuAdapter / cpuBare)} | ${f1(wallBare)} / ${f1(wallAdapter)} | ${f2(mbBare)} / ${f2(mbAdapter)} | ${Math.round(m.kb.bare)} / ${Math.round(m.kb.adapter)} | ${delta <= MISS_MS ? 'yes' : 'MISSED'} |`
}

function report(
  measured: Measured[],
  create: { receiver: Sample[]; store: Sample[] },
  start: { bare: Sample[]; adapter: Sample[] },
): void {
  const out: string[] = []
  out.push(
    `Node ${process.version} (${process.platform} ${process.arch}), ${cpus().length} x ${cpus()[0]?.model ?? 'unknown CPU'}`,
    'Command: npm run bench:cold -> npm run build --silent && node --import tsx bench/cold.bench.ts',
    `Method: each entry bundled by esbuild (platform node; the Workers one without the node condition, so with the Web Crypto build), then imported in a fresh \`node --expose-gc\` process, ${SAMPLES} samples per bundle, interleaved. The import() evaluates the bundle and creates the receiver with the default memory store. CPU ms = the process's CPU time over the import (judged: on a shared machine the wall time mostly measures the wait for a core), wall ms beside it; MB = heap + array buffers left after a full GC; medians.`,
    '',
    '| entry | bare CPU ms | adapter CPU ms | adapter - bare | ratio | wall ms bare / adapter | MB bare / adapter | bundle KB bare / adapter | within 15 ms |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---|',
  )
  const ratios: Record<string, number> = {}
  const targets: Record<string, number> = {}
  for (const m of measured) out.push(entryRow(m, ratios, targets))
  // Any verifier loads node:crypto, so the bare handler does too: the ratio is what the library adds.
  const [startBare, startAdapter] = [med(start.bare, 'cpuMs'), med(start.adapter, 'cpuMs')]
  ratios['lambda whole cold start: adapter / bare, wall ms'] =
    med(start.adapter, 'ms') / med(start.bare, 'ms')
  targets[LAMBDA_RATIO] = startAdapter / startBare
  const receiverMs = med(create.receiver, 'ms')
  const receiverMb = med(create.receiver, 'mb')
  targets['createReceiver, default memory store: ms <= 1'] = receiverMs
  targets['createReceiver, default memory store: MB <= 1'] = receiverMb
  ratios['createReceiver: CPU ms'] = med(create.receiver, 'cpuMs')
  ratios['memoryStore(): ms'] = med(create.store, 'ms')
  ratios['memoryStore(): MB'] = med(create.store, 'mb')
  out.push(
    '',
    `Lambda's whole cold start (Node's own start, then the bundle imported and its receiver made; no flags), CPU ms, medians of ${SAMPLES}: bare handler loading node:crypto ${f1(startBare)}, adapter ${f1(startAdapter)}, ratio ${f2(startAdapter / startBare)}; wall ms ${f1(med(start.bare, 'ms'))} / ${f1(med(start.adapter, 'ms'))}.`,
    '',
    `createReceiver with the default memory store, the core already imported, first call in a fresh process: ${f2(receiverMs)} ms wall (${f2(ratios['createReceiver: CPU ms'] as number)} ms CPU), ${f2(receiverMb)} MB after GC; memoryStore() alone: ${f2(ratios['memoryStore(): ms'] as number)} ms, ${f2(ratios['memoryStore(): MB'] as number)} MB. Target: at most 1 ms and 1 MB.`,
    '',
    `Targets on Node ${process.version} (reported, not asserted):`,
  )
  for (const [label, value] of Object.entries(targets)) {
    const limit = label.includes(`${MISS_MS} ms`) ? MISS_MS : label === LAMBDA_RATIO ? 1.1 : 1
    out.push(
      `- ${label}: ${f2(value)} on Node ${process.version} -> ${value <= limit ? 'MET' : 'NOT MET'}`,
    )
  }
  process.stdout.write(`${out.join('\n')}\n`)
  writeResults('cold', { ratios, targets }, QUICK)
  updateReadme('cold', out, QUICK)
}

mkdirSync(OUT, { recursive: true })
try {
  const measured = await measureEntries()
  const start = await measureStart()
  const create = await measureCreate()
  report(measured, create, start)
} finally {
  rmSync(OUT, { recursive: true, force: true })
}

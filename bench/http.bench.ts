/**
 * `npm run bench:http`: every adapter over real HTTP on loopback, beside the bare
 * route of the same framework (raw body + the spec's HMAC, nothing else) in the
 * same process. autocannon, 10 connections, 600-byte signed conversion events,
 * each with a new event id and conversion id, so every adapter request is
 * verified, parsed, claimed, handled and committed (no cheap duplicates).
 *
 * Each route also runs as "core": the bare route handing its bytes to the
 * core's receive(), so server CPU per request splits into framework, core and
 * adapter. Rounds rotate the order; the table shows the median of the rounds.
 * Target: adapter >= 0.9 x bare. Reported, never asserted.
 *
 * BENCH_SECONDS (default 4) per measurement, BENCH_ROUNDS (default 3),
 * BENCH_ONLY=node,koa,fastify to run a subset (the names of the table's first column).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { createHmac } from 'node:crypto'
import { once } from 'node:events'
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { buildConversionEvent } from '@affiliate-webhooks/core/testing'
import autocannon from 'autocannon'
import { writeResults } from './results.js'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 4)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const WARMUP_SECONDS = 2
const CONNECTIONS = 10
const BODY_BYTES = 600
const TARGET = 0.9
const SECRET = 'whsec_bench_http_4Jd9Qx2LmP7sVt1Z'

const root = fileURLToPath(new URL('..', import.meta.url))

// ---------------------------------------------------------------------------
// Deliveries: 600-byte bodies signed as the service signs them, ids never repeated.

interface Delivery {
  headers: Record<string, string>
  body: Buffer
}

let serial = 0
function delivery(): Delivery {
  serial++
  const event = buildConversionEvent({
    id: `evt_bench${serial.toString(16).padStart(16, '0')}`,
    createdAt: Date.now(),
    conversion: { id: serial },
  })
  const bare = JSON.stringify({ ...event, data: { ...event.data, note: '' } })
  const note = 'Order 4711, 3 items, shipped to DE; campaign spring-sale. '
    .repeat(20)
    .slice(0, BODY_BYTES - Buffer.byteLength(bare))
  const body = Buffer.from(JSON.stringify({ ...event, data: { ...event.data, note } }))
  const t = Math.floor(Date.now() / 1000)
  const v1 = createHmac('sha256', SECRET).update(`${t}.`).update(body).digest('hex')
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'service-signature': `t=${t},v1=${v1}`,
      'service-event-id': event.id,
      'service-delivery-attempt': '1',
    },
  }
}

// ---------------------------------------------------------------------------
// Servers, each in its own process so the load generator never shares its event loop.

interface Server {
  base: string
  stop(): Promise<void>
}

async function startProcess(command: string, args: string[], cwd: string, parse: RegExp) {
  const child: ChildProcess = spawn(command, args, {
    cwd,
    env: {
      ...process.env,
      BENCH_SECRET: SECRET,
      NODE_ENV: 'production',
      NEXT_TELEMETRY_DISABLED: '1',
      // Without the root tsconfig's paths, tsx loads the packages' builds, as users get them.
      TSX_TSCONFIG_PATH: join(root, 'bench/http.tsconfig.json'),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const base = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })
    lines.on('line', (line) => {
      const match = parse.exec(line)
      if (match?.[1]) resolve(match[1])
    })
    child.once('exit', (code) => reject(new Error(`${command} ${args.join(' ')} exited ${code}`)))
  })
  return {
    base,
    stop: async () => {
      if (child.exitCode !== null) return
      const exited = once(child, 'exit')
      child.kill('SIGTERM')
      await exited
    },
  }
}

const frameworkServer = async (framework: string): Promise<Server> => {
  const { base, stop } = await startProcess(
    process.execPath,
    ['--import', 'tsx', 'bench/http-servers.ts', framework],
    root,
    /"port":(\d+)/,
  )
  return { base: `http://127.0.0.1:${base}`, stop }
}

/** bench/http-web.ts on Node (@hono/node-server), Bun or Deno, from the npm-installed binaries. */
const webServer = (runtime: 'node' | 'bun' | 'deno') => async (): Promise<Server> => {
  const script = 'bench/http-web.ts'
  const [command, args] =
    runtime === 'node'
      ? [process.execPath, ['--import', 'tsx', script]]
      : runtime === 'bun'
        ? [join(root, 'node_modules/.bin/bun'), ['run', script]]
        : [
            join(root, 'node_modules/.bin/deno'),
            [
              'run',
              '-A',
              '--quiet',
              '--no-lock',
              '--node-modules-dir=manual',
              '--sloppy-imports',
              script,
            ],
          ]
  const { base, stop } = await startProcess(command, args, root, /"port":(\d+)/)
  return { base: `http://127.0.0.1:${base}`, stop }
}

const web = (runtime: 'node' | 'bun' | 'deno', name: string): Target => ({
  name,
  server: webServer(runtime),
  bare: '/bare',
  core: '/core',
  adapter: '/hooks',
  cpu: '/cpu',
})

let nextApp: string | undefined
async function nextServer(): Promise<Server> {
  if (nextApp === undefined) {
    mkdirSync(join(root, '.tmp'), { recursive: true })
    nextApp = mkdtempSync(join(root, '.tmp', 'bench-http-next-'))
    cpSync(join(root, 'bench/http-next'), nextApp, {
      recursive: true,
      filter: (source) => !/[\\/](\.next|node_modules|next-env\.d\.ts)$/.test(source),
    })
    process.stdout.write('building bench/http-next with next build ... ')
    const build = spawn(
      process.execPath,
      [join(root, 'node_modules/next/dist/bin/next'), 'build'],
      {
        cwd: nextApp,
        // The /core routes make their receiver at import, which next build runs.
        env: {
          ...process.env,
          BENCH_SECRET: SECRET,
          NODE_ENV: 'production',
          NEXT_TELEMETRY_DISABLED: '1',
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    )
    const [code] = await once(build, 'exit')
    if (code !== 0) throw new Error(`next build exited ${code}`)
    process.stdout.write('done\n')
  }
  return startProcess(
    process.execPath,
    [
      join(root, 'node_modules/next/dist/bin/next'),
      'start',
      '--port',
      '0',
      '--hostname',
      '127.0.0.1',
    ],
    nextApp,
    /Local:\s+(http:\/\/\S+)/,
  )
}

// ---------------------------------------------------------------------------
// Measurement.

interface Sample {
  rps: number
  p99: number
  /** Server CPU time per request, µs: what the route costs, whoever else uses the machine. */
  cpu: number
}

const readCpu = async (base: string, path: string) =>
  ((await (await fetch(`${base}${path}`)).json()) as { cpu: number }).cpu
// Once more on a failed read: a keep-alive connection the server closed just as
// fetch reused it fails with "other side closed" (seen on a loaded machine).
const serverCpu = (base: string, path: string) =>
  readCpu(base, path).catch(() => readCpu(base, path))

async function load(
  server: Server & { cpuPath: string },
  path: string,
  seconds: number,
  expectedRps: number,
): Promise<Sample> {
  const url = `${server.base}${path}`
  // Signed just before the run (well inside the 300 s tolerance), with room to spare.
  const pool = Array.from({ length: Math.ceil(expectedRps * seconds * 1.5) + 2000 }, delivery)
  let next = 0
  const cpuBefore = await serverCpu(server.base, server.cpuPath)
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: seconds,
    method: 'POST',
    requests: [
      {
        setupRequest: (request) => {
          // Past the pool (a faster run than the warm-up said), sign on the spot.
          const { headers, body } = pool[next++] ?? delivery()
          return { ...request, method: 'POST', headers, body }
        },
      },
    ],
  })
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
    throw new Error(
      `${url}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`,
    )
  }
  const cpu = (await serverCpu(server.base, server.cpuPath)) - cpuBefore
  return { rps: result.requests.average, p99: result.latency.p99, cpu: cpu / result.requests.total }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] as number
}

type Kind = 'bare' | 'core' | 'adapter'

interface Target {
  name: string
  server: () => Promise<Server>
  bare: string
  /** The bare route handing its bytes to the core's receive(): the adapter minus the adapter. */
  core: string
  adapter: string
  /** A GET route answering `{"cpu": µs}` for the server process. */
  cpu: string
}

const framework = (name: string): Target => ({
  name,
  server: () => frameworkServer(name),
  bare: '/bare',
  core: '/core',
  adapter: '/hooks',
  cpu: '/cpu',
})

const targets: Target[] = [
  web('node', 'web on Node'),
  web('bun', 'web on Bun'),
  web('deno', 'web on Deno'),
  framework('node'),
  framework('express 4'),
  framework('express 5'),
  framework('koa'),
  framework('fastify'),
  {
    name: 'next App',
    server: nextServer,
    bare: '/api/bare',
    core: '/api/core',
    adapter: '/api/hooks',
    cpu: '/api/cpu',
  },
  {
    name: 'next Pages',
    server: nextServer,
    bare: '/api/pages-bare',
    core: '/api/pages-core',
    adapter: '/api/pages-hooks',
    cpu: '/api/cpu',
  },
]

const only = process.env.BENCH_ONLY?.split(',').map((name) => name.trim())
const rows: string[][] = []

console.log(
  `bench:http - Node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), ` +
    `${CONNECTIONS} connections, ${BODY_BYTES}-byte signed events, ${ROUNDS} rounds x ${SECONDS} s, median\n`,
)

try {
  for (const target of targets) {
    if (only && !only.includes(target.name)) continue
    const server = { ...(await target.server()), cpuPath: target.cpu }
    try {
      const kinds: Kind[] = ['bare', 'core', 'adapter']
      const estimate = { bare: 0, core: 0, adapter: 0 }
      for (const kind of kinds) {
        estimate[kind] = (await load(server, target[kind], WARMUP_SECONDS, 30_000)).rps
      }
      const samples: Record<Kind, Sample[]> = { bare: [], core: [], adapter: [] }
      for (let round = 0; round < ROUNDS; round++) {
        // Each route goes first, in the middle and last in turn.
        const order = kinds.map((_, i) => kinds[(i + round) % kinds.length] as Kind)
        for (const kind of order) {
          samples[kind].push(await load(server, target[kind], SECONDS, estimate[kind]))
        }
      }
      const of = (kind: Kind, key: keyof Sample) =>
        median(samples[kind].map((sample) => sample[key]))
      const ratio = of('adapter', 'rps') / of('bare', 'rps')
      rows.push([
        target.name,
        of('bare', 'rps').toFixed(0),
        of('adapter', 'rps').toFixed(0),
        ratio.toFixed(2),
        of('bare', 'p99').toFixed(1),
        of('adapter', 'p99').toFixed(1),
        of('bare', 'cpu').toFixed(0),
        of('core', 'cpu').toFixed(0),
        of('adapter', 'cpu').toFixed(0),
        ratio >= TARGET ? 'ok' : 'MISSED',
      ])
      console.log(`${target.name}: ${rows.at(-1)?.slice(1, 4).join(' / ')}`)
    } finally {
      await server.stop()
    }
  }
} finally {
  if (nextApp !== undefined) rmSync(nextApp, { recursive: true, force: true })
}

const header = [
  'framework',
  'bare req/s',
  'adapter req/s',
  'ratio',
  'bare p99 ms',
  'adapter p99 ms',
  'CPU µs/req bare',
  'bare+core',
  'adapter',
  `>= ${TARGET}`,
]
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
const line = (cells: string[]) =>
  `| ${cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join(' | ')} |`
writeResults('http', {
  ratios: Object.fromEntries(
    rows.map((row) => [`${row[0]}: adapter / bare req/s`, Number(row[3])]),
  ),
  targets: Object.fromEntries(
    rows.map((row) => [`${row[0]}: adapter >= ${TARGET} x bare`, Number(row[3])]),
  ),
})
console.log(`\n${line(header)}`)
console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`)
for (const row of rows) console.log(line(row))

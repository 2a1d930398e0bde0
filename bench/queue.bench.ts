/**
 * The BullMQ hand-off, on loopback Redis: the receiver's ack (verify, store peek,
 * job added) beside the inline receiver with the same Redis store, both against
 * the floor of a bare BullMQ `queue.add`; and the worker's throughput on no-op
 * handlers against the floor of a bare BullMQ worker with a no-op processor.
 *
 * Run with `npm run bench:queue` (REDIS_URL, default redis://127.0.0.1:6379).
 * Everything it writes has its own queue name and prefix and is deleted at the end.
 */
import { randomUUID } from 'node:crypto'
import type * as BullmqPackage from '@affiliate-webhooks/bullmq'
import type * as Core from '@affiliate-webhooks/core'
import type * as Testing from '@affiliate-webhooks/core/testing'
import type * as RedisPackage from '@affiliate-webhooks/redis'
import { Queue, Worker } from 'bullmq'
import { Redis } from 'ioredis'
import { writeResults } from './results.js'

const built = (path: string) => new URL(`../packages/${path}`, import.meta.url).href
const core = (await import(built('core/dist/node/index.js'))) as typeof Core
const testing = (await import(built('core/dist/node/testing.js'))) as typeof Testing
const { redisStore } = (await import(built('redis/dist/index.js'))) as typeof RedisPackage
const { bullmqHandoff, createWorker } = (await import(
  built('bullmq/dist/index.js')
)) as typeof BullmqPackage

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const { hostname, port } = new URL(REDIS_URL)
const connection = { host: hostname, port: Number(port || 6379) }
const SECRET = 'whsec_queue_bench_secret'
const RUN = randomUUID().slice(0, 8)
const PREFIX = `aw-qbench-${RUN}:`
const CONCURRENCY = 64
const ROUNDS = 3
const PER_ROUND = 4000
const WORKER_EVENTS = 20_000
const client = new Redis(REDIS_URL)
const queues: string[] = []
const queueName = (what: string) => {
  const name = `aw-qbench-${RUN}-${what}`
  queues.push(name)
  return name
}

type Input = { headers: Record<string, string>; rawBody: Buffer }

let nextConversionId = 1
async function pool(events: number): Promise<Input[]> {
  const out: Input[] = []
  for (let i = 0; i < events; i++) {
    const event = testing.buildConversionEvent({ conversion: { id: nextConversionId++ } })
    const { headers, body } = await testing.signedDelivery({ secret: SECRET, event })
    out.push({ headers, rawBody: Buffer.from(body) })
  }
  return out
}

/** Runs `count` calls of `one(i)` with CONCURRENCY in flight; latency per call in ms. */
async function drive(count: number, one: (i: number) => Promise<void>) {
  const latencies: number[] = []
  let next = 0
  const started = process.hrtime.bigint()
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        const i = next++
        const t = process.hrtime.bigint()
        await one(i)
        latencies.push(Number(process.hrtime.bigint() - t) / 1e6)
      }
    }),
  )
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  latencies.sort((a, b) => a - b)
  const pct = (p: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] as number
  return { perSecond: count / seconds, p50: pct(0.5), p99: pct(0.99) }
}

const expectOutcome = (result: Core.ReceiveResult, outcome: Core.Outcome) => {
  if (result.outcome !== outcome) throw new Error(`unexpected ${result.outcome}: ${result.body}`)
}

const store = redisStore({ client, prefix: PREFIX })
const handoff = bullmqHandoff({ connection, queueName: queueName('ack'), removeOnComplete: true })
const inline = core.createReceiver({ secret: SECRET, store, onConversion: () => {} })
const queued = core.createReceiver({ secret: SECRET, store, queue: handoff })
const bare = new Queue(queueName('bare'), { connection })

const cases = {
  'bare BullMQ queue.add (floor)': async () => {
    const data = { event: testing.buildConversionEvent(), attempt: 1, signedAt: 0 }
    return drive(PER_ROUND, async (i) => {
      await bare.add('x', data, { jobId: `evt_${RUN}_${nextConversionId}_${i}` })
    })
  },
  'inline receiver, redisStore, no-op handler': async () => {
    const inputs = await pool(PER_ROUND)
    return drive(PER_ROUND, async (i) =>
      expectOutcome(await inline.receive(inputs[i] as Input), 'processed'),
    )
  },
  'queued receiver: verify, peek, add job': async () => {
    const inputs = await pool(PER_ROUND)
    return drive(PER_ROUND, async (i) =>
      expectOutcome(await queued.receive(inputs[i] as Input), 'queued'),
    )
  },
}
type Row = { perSecond: number; p50: number; p99: number }
const rows = new Map<string, Row[]>()
for (const run of Object.values(cases)) await run() // warm-up
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, run] of Object.entries(cases)) {
    const list = rows.get(name) ?? []
    list.push(await run())
    rows.set(name, list)
  }
}

/** Events/s of a worker draining `count` jobs already queued, counted as they complete. */
async function drain(count: number, start: () => { worker: Worker; close(): Promise<void> }) {
  const started = process.hrtime.bigint()
  const running = start()
  let completed = 0
  await new Promise<void>((resolve, reject) => {
    running.worker.on('failed', (_job, error) => reject(error))
    running.worker.on('completed', () => {
      if (++completed === count) resolve()
    })
  })
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  await running.close()
  return count / seconds
}

// Worker throughput: the same number of jobs for the floor (a bare BullMQ worker)
// and for createWorker (store begin + commit and the ordering index per job).
const bareName = queueName('bare-worker')
const bareJobs = new Queue(bareName, { connection })
for (let i = 0; i < WORKER_EVENTS; i += 1000) {
  await bareJobs.addBulk(
    Array.from({ length: 1000 }, (_, j) => ({ name: 'x', data: { n: i + j } })),
  )
}
await bareJobs.close()
const bareWorker = await drain(WORKER_EVENTS, () => {
  const worker = new Worker(bareName, async () => 'ok', { connection, concurrency: CONCURRENCY })
  return { worker, close: () => worker.close() }
})

const workName = queueName('worker')
const feed = bullmqHandoff({ connection, queueName: workName })
for (let i = 0; i < WORKER_EVENTS; i += 500) {
  await Promise.all(
    Array.from({ length: 500 }, () => {
      const event = testing.buildConversionEvent({ conversion: { id: nextConversionId++ } })
      return feed.enqueue({
        event,
        conversionId: event.data.conversion.id,
        order: Date.parse(event.createdAt) * 2000,
        attempt: 1,
        signedAt: 0,
      })
    }),
  )
}
await feed.close()
const ourWorker = await drain(WORKER_EVENTS, () =>
  createWorker({
    connection,
    queueName: workName,
    store,
    concurrency: CONCURRENCY,
    onConversion: () => {},
  }),
)

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number
const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
const med = (name: string, key: keyof Row) => median((rows.get(name) ?? []).map((r) => r[key]))
const floor = 'bare BullMQ queue.add (floor)'
console.log('# Queue hand-off benchmark (built packages, loopback Redis)\n')
console.log(
  `Node ${process.version}, Redis at ${REDIS_URL}; concurrency ${CONCURRENCY}, ${ROUNDS} rounds of ${PER_ROUND} events per case, medians shown.`,
)
console.log('Command: npm run bench:queue\n')
console.log('| receiver side | events/s | ack p50 ms | ack p99 ms | p99 / floor p99 |')
console.log('|---|---:|---:|---:|---:|')
for (const name of rows.keys()) {
  console.log(
    `| ${name} | ${fmt(med(name, 'perSecond'))} | ${fmt(med(name, 'p50'), 2)} | ${fmt(med(name, 'p99'), 2)} | ${fmt(med(name, 'p99') / med(floor, 'p99'), 2)}x |`,
  )
}
console.log('')
console.log('| worker side (no-op handlers) | events/s | / floor |')
console.log('|---|---:|---:|')
console.log(`| bare BullMQ worker (floor) | ${fmt(bareWorker)} | 1.00x |`)
console.log(
  `| createWorker (store + ordering) | ${fmt(ourWorker)} | ${fmt(ourWorker / bareWorker, 2)}x |`,
)
console.log('')
const p99 = med('queued receiver: verify, peek, add job', 'p99')
console.log(
  `Targets: ack p99 < 20 ms: ${fmt(p99, 2)} ms ${p99 < 20 ? 'met' : 'MISSED'}; worker >= 5,000 events/s: ${fmt(ourWorker)} ${ourWorker >= 5000 ? 'met' : 'MISSED'}`,
)

writeResults('queue', {
  ratios: Object.fromEntries([
    ...[...rows.keys()]
      .filter((name) => name !== floor)
      .flatMap((name) => [
        [`${name}: events/s / floor`, med(name, 'perSecond') / med(floor, 'perSecond')],
        [`${name}: ack p99 / floor p99`, med(name, 'p99') / med(floor, 'p99')],
      ]),
    ['createWorker / bare BullMQ worker, events/s', ourWorker / bareWorker],
  ]),
  targets: { 'ack p99 ms < 20': p99, 'worker events/s >= 5000': ourWorker },
})

await handoff.close()
await bare.close()
for (const name of queues) {
  const q = new Queue(name, { connection })
  await q.obliterate({ force: true })
  await q.close()
}
// The store's keys, and the ordering index the hand-off keeps beside each queue.
for (const pattern of [`${PREFIX}*`, ...queues.map((name) => `bull:${name}:*`)]) {
  let cursor = '0'
  do {
    const [nextCursor, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000)
    cursor = nextCursor
    if (keys.length > 0) await client.unlink(...keys)
  } while (cursor !== '0')
}
client.disconnect()

/**
 * The Redis store under the receiver, on loopback Redis: round trips per handled
 * event (counted by Redis itself), events/s at concurrency 1 and 64, latency
 * added over the memory store, and Redis memory per handled event.
 *
 * Run with `npm run bench:redis` (REDIS_URL, default redis://127.0.0.1:6379).
 * Everything it writes has its own prefix and is deleted at the end.
 *
 * The cost of `replication`: a private primary with one replica (redis-server
 * processes started here, removed at the end) runs the store with and without
 * `replication: { replicas: 1, timeoutMs: 500 }`, in the same rounds.
 */
import { randomUUID } from 'node:crypto'
import type * as Core from '@affiliate-webhooks/core'
import type * as Testing from '@affiliate-webhooks/core/testing'
import type * as RedisPackage from '@affiliate-webhooks/redis'
import { Redis } from 'ioredis'
import { startRedis } from '../test/support/redis-servers.js'
import { writeResults } from './results.js'

const built = (path: string) => new URL(`../packages/${path}`, import.meta.url).href
const core = (await import(built('core/dist/node/index.js'))) as typeof Core
const testing = (await import(built('core/dist/node/testing.js'))) as typeof Testing
const { redisStore } = (await import(built('redis/dist/index.js'))) as typeof RedisPackage

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const SECRET = 'whsec_redis_bench_secret'
const PREFIX = `aw-bench-${randomUUID().slice(0, 8)}:`
const client = new Redis(REDIS_URL)
const admin = new Redis(REDIS_URL)

// The primary and replica for the replication rows, both on this machine.
const primary = await startRedis(['--repl-diskless-sync-delay', '0'])
const replica = await startRedis(['--replicaof', '127.0.0.1', String(primary.port)])
const replicated = new Redis(primary.url)
const probe = new Redis(replica.url)
while (!(await probe.info('replication')).includes('master_link_status:up')) {
  await new Promise((resolve) => setTimeout(resolve, 50))
}
probe.disconnect()
const REPLICATION = { replicas: 1, timeoutMs: 500 }

type Input = { headers: Record<string, string>; rawBody: Buffer }

let nextConversionId = 1
/** Lifecycles of four events per conversion, as the service emits them, on fresh conversion ids. */
async function pool(conversions: number): Promise<Input[]> {
  const firstId = nextConversionId
  nextConversionId += conversions
  const statuses = ['pending', 'approved', 'available', 'ready_for_payout']
  const out: Input[] = []
  const base = Date.now() - 3_600_000
  // Step by step across conversions: a conversion's status changes are spread
  // over time, so its events do not overlap in flight.
  for (let step = 0; step < statuses.length; step++) {
    for (let c = 0; c < conversions; c++) {
      const event = testing.buildConversionEvent({
        type: step === 0 ? 'conversion.created' : 'conversion.updated',
        createdAt: base + step * 1000,
        conversion: { id: firstId + c, status: statuses[step] as string },
      })
      const { headers, body } = await testing.signedDelivery({ secret: SECRET, event })
      out.push({ headers, rawBody: Buffer.from(body) })
    }
  }
  return out
}

// Round trips are what the store's connection sends: count every command there.
// Redis's own count of script calls cross-checks it (its commandstats also count
// the commands run inside a script, so only EVALSHA and EVAL are taken).
let sent = 0
const send = client.sendCommand.bind(client)
client.sendCommand = ((...args: Parameters<typeof send>) => {
  sent++
  return send(...args)
}) as typeof client.sendCommand

async function scriptCalls(): Promise<number> {
  const info = await admin.info('commandstats')
  let calls = 0
  for (const match of info.matchAll(/^cmdstat_(evalsha|eval):calls=(\d+)/gm))
    calls += Number(match[2])
  return calls
}

async function usedMemory(): Promise<number> {
  const info = await admin.info('memory')
  return Number(/used_memory:(\d+)/.exec(info)?.[1])
}

/** Runs `inputs` through `receive` with `concurrency` requests in flight; per-request latency in µs. */
async function drive(receiver: Core.Receiver, inputs: Input[], concurrency: number) {
  const latencies: number[] = []
  let next = 0
  const started = process.hrtime.bigint()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < inputs.length) {
        const input = inputs[next++] as Input
        const t = process.hrtime.bigint()
        const result = await receiver.receive(input)
        latencies.push(Number(process.hrtime.bigint() - t) / 1000)
        if (result.outcome !== 'processed')
          throw new Error(`unexpected ${result.outcome}: ${result.body}`)
      }
    }),
  )
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  latencies.sort((a, b) => a - b)
  const pct = (p: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] as number
  return { perSecond: inputs.length / seconds, p50: pct(0.5), p99: pct(0.99) }
}

const receiverOn = (store: Core.EventStore) =>
  core.createReceiver({ secret: SECRET, store, onConversion: () => {} })
const ROUNDS = 5
const PER_ROUND = 2000 // events: 500 conversions x 4
const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number

// Warm-up (JIT, script cache in Redis).
await drive(receiverOn(redisStore({ client, prefix: PREFIX })), await pool(250), 8)
await drive(receiverOn(core.memoryStore()), await pool(250), 8)
const onPrimary = () => redisStore({ client: replicated, prefix: PREFIX })
const withReplication = redisStore({ client: replicated, prefix: PREFIX, replication: REPLICATION })
await drive(receiverOn(onPrimary()), await pool(250), 8)
await drive(receiverOn(withReplication), await pool(250), 8)

const rows: Record<string, { perSecond: number[]; p50: number[]; p99: number[] }> = {}
const record = (name: string, r: { perSecond: number; p50: number; p99: number }) => {
  rows[name] ??= { perSecond: [], p50: [], p99: [] }
  rows[name].perSecond.push(r.perSecond)
  rows[name].p50.push(r.p50)
  rows[name].p99.push(r.p99)
}

let roundTrips = 0
let scripts = 0
let handled = 0
for (let round = 0; round < ROUNDS; round++) {
  for (const concurrency of [1, 64]) {
    const forMemory = await pool(PER_ROUND / 4)
    const forRedis = await pool(PER_ROUND / 4)
    // Interleaved: memory then Redis in one round, so both see the same machine.
    record(
      `memoryStore, concurrency ${concurrency}`,
      await drive(receiverOn(core.memoryStore()), forMemory, concurrency),
    )
    const sentBefore = sent
    const scriptsBefore = await scriptCalls()
    record(
      `redisStore, concurrency ${concurrency}`,
      await drive(receiverOn(redisStore({ client, prefix: PREFIX })), forRedis, concurrency),
    )
    roundTrips += sent - sentBefore
    scripts += (await scriptCalls()) - scriptsBefore
    handled += forRedis.length
    // Same primary (with its replica), without and with the replication gate.
    record(
      `redisStore on a primary with a replica, concurrency ${concurrency}`,
      await drive(receiverOn(onPrimary()), await pool(PER_ROUND / 4), concurrency),
    )
    record(
      `redisStore, replication 1 replica, concurrency ${concurrency}`,
      await drive(receiverOn(withReplication), await pool(PER_ROUND / 4), concurrency),
    )
  }
}

// The floor for added latency: two bare round trips (PING) on the same kind of
// connection, measured now, since loopback latency on a shared VM drifts.
const pings: number[] = []
for (let i = 0; i < 2000; i++) {
  const t = process.hrtime.bigint()
  await admin.ping()
  pings.push(Number(process.hrtime.bigint() - t) / 1000)
}
pings.sort((a, b) => a - b)
const pingP50 = pings[Math.floor(pings.length / 2)] as number

// Memory: a fresh batch of lifecycles, measured on their own keys.
await admin.call('MEMORY', 'PURGE').catch(() => {})
const memoryBefore = await usedMemory()
const MEMORY_EVENTS = 20_000
await drive(receiverOn(redisStore({ client, prefix: PREFIX })), await pool(MEMORY_EVENTS / 4), 16)
const bytesPerEvent = ((await usedMemory()) - memoryBefore) / MEMORY_EVENTS

const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
console.log('# Redis store benchmark (built packages, loopback Redis)\n')
console.log(
  `Node ${process.version}, Redis at ${REDIS_URL}; ${ROUNDS} rounds of ${PER_ROUND} events per case, medians shown.`,
)
console.log('Command: npm run bench:redis\n')
console.log('| case | events/s | p50 µs | p99 µs |')
console.log('|---|---:|---:|---:|')
for (const [name, r] of Object.entries(rows)) {
  console.log(
    `| ${name} | ${fmt(median(r.perSecond))} | ${fmt(median(r.p50), 1)} | ${fmt(median(r.p99), 1)} |`,
  )
}
const added = (c: number, key: 'p50' | 'p99') =>
  median(rows[`redisStore, concurrency ${c}`]?.[key] ?? []) -
  median(rows[`memoryStore, concurrency ${c}`]?.[key] ?? [])
console.log('')
console.log(
  `Round trips per handled event: ${fmt(roundTrips / handled, 3)} commands sent by the store's connection (target 2); Redis counted ${fmt(scripts / handled, 3)} EVALSHA/EVAL per event`,
)
console.log(
  `Floor: two PING round trips on this connection, p50 ${fmt(2 * pingP50, 1)} µs; added p50 at concurrency 1 is ${fmt(added(1, 'p50') / (2 * pingP50), 2)}x that floor`,
)
console.log(
  `Latency added over memoryStore at concurrency 1: p50 ${fmt(added(1, 'p50'), 1)} µs, p99 ${fmt(added(1, 'p99'), 1)} µs`,
)
console.log(
  `Latency added over memoryStore at concurrency 64: p50 ${fmt(added(64, 'p50'), 1)} µs, p99 ${fmt(added(64, 'p99'), 1)} µs`,
)
const replicationRatio = (c: number) =>
  median(rows[`redisStore, replication 1 replica, concurrency ${c}`]?.perSecond ?? []) /
  median(rows[`redisStore on a primary with a replica, concurrency ${c}`]?.perSecond ?? [])
const replicationAdded = (c: number) =>
  median(rows[`redisStore, replication 1 replica, concurrency ${c}`]?.p50 ?? []) -
  median(rows[`redisStore on a primary with a replica, concurrency ${c}`]?.p50 ?? [])
console.log(
  `replication { replicas: 1, timeoutMs: 500 } on a primary with one replica: events/s ${fmt(replicationRatio(1), 2)}x without it at concurrency 1 (p50 +${fmt(replicationAdded(1), 1)} µs), ${fmt(replicationRatio(64), 2)}x at concurrency 64 (p50 +${fmt(replicationAdded(64), 1)} µs)`,
)
console.log(
  `Redis memory per handled event (lifecycles of 4 events): ${fmt(bytesPerEvent)} bytes (used_memory delta over ${fmt(MEMORY_EVENTS)} events)`,
)

writeResults('redis', {
  ratios: {
    'redisStore / memoryStore events/s, concurrency 1':
      median(rows['redisStore, concurrency 1']?.perSecond ?? []) /
      median(rows['memoryStore, concurrency 1']?.perSecond ?? []),
    'redisStore / memoryStore events/s, concurrency 64':
      median(rows['redisStore, concurrency 64']?.perSecond ?? []) /
      median(rows['memoryStore, concurrency 64']?.perSecond ?? []),
    'added p50 at concurrency 1 / two PING round trips': added(1, 'p50') / (2 * pingP50),
    'replication / without, events/s on a primary with a replica, concurrency 1':
      replicationRatio(1),
    'replication / without, events/s on a primary with a replica, concurrency 64':
      replicationRatio(64),
  },
  targets: {
    'round trips per handled event (target 2)': roundTrips / handled,
    'Redis bytes per handled event': bytesPerEvent,
  },
})

let cursor = '0'
do {
  const [nextCursor, keys] = await admin.scan(cursor, 'MATCH', `${PREFIX}*`, 'COUNT', 1000)
  cursor = nextCursor
  if (keys.length > 0) await admin.unlink(...keys)
} while (cursor !== '0')
client.disconnect()
admin.disconnect()
replicated.disconnect()
await withReplication.close()
await replica.stop()
await primary.stop()

/**
 * The SQL stores against a bare transaction on the same database, in one run:
 * events/s and p50/p99 latency at concurrency 16 of
 *   floor: take a client, BEGIN; INSERT the effect; COMMIT, give it back;
 *   store: begin (claim), the same INSERT through ctx.tx, commit,
 * and the store's own round trips per delivery (every query its clients send,
 * the handler's INSERT excluded). Targets: at least 0.7 of the floor's events/s,
 * at most 4 round trips.
 *
 * `npm run bench:sql` (POSTGRES_URL, MYSQL_URL). Each database is created for the
 * run and dropped at the end. BENCH_QUICK=1 runs tiny rounds (the guard test);
 * BENCH_RESULTS names the JSON file (default bench/results/sql.json).
 */
import { writeFileSync } from 'node:fs'
import type * as PostgresPackage from '@affiliate-webhooks/postgres'
import pg from 'pg'
import { createPostgresTestDatabase } from '../test/postgres-db.js'

const built = (path: string) => new URL(`../packages/${path}`, import.meta.url).href
const { postgresStore } = (await import(built('postgres/dist/index.js'))) as typeof PostgresPackage

const QUICK = process.env.BENCH_QUICK === '1'
const CONCURRENCY = 16
const EVENTS = QUICK ? 200 : 4000
const ROUNDS = QUICK ? 1 : 3
const WARMUP = QUICK ? 50 : 500

/** One database's pair of workloads. */
interface Target {
  name: string
  /** One bare transaction with the INSERT. */
  floor(i: number): Promise<void>
  /** One delivery through the store, the INSERT in ctx.tx. */
  store(i: number): Promise<void>
  /** Queries the store's clients sent so far, the handler's included. */
  sent(): number
  close(): Promise<void>
}

interface Run {
  perSecond: number
  p50: number
  p99: number
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] as number

async function measure(
  work: (i: number) => Promise<void>,
  offset: number,
  count = EVENTS,
): Promise<Run> {
  const latencies: number[] = []
  let next = 0
  const started = performance.now()
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      const t = performance.now()
      await work(offset + i)
      latencies.push(performance.now() - t)
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  const seconds = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  return {
    perSecond: EVENTS / seconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
  }
}

const median = (runs: Run[], key: keyof Run) => {
  const values = runs.map((run) => run[key]).sort((a, b) => a - b)
  return values[Math.floor(values.length / 2)] as number
}

async function postgresTarget(): Promise<Target> {
  const db = await createPostgresTestDatabase()
  await db.pool.query('CREATE TABLE ledger (event_id text PRIMARY KEY, amount numeric NOT NULL)')
  let sent = 0
  // Every query a store's client sends is one round trip (the store sends its
  // statements together in one simple-protocol query).
  const connect = db.pool.connect.bind(db.pool)
  const counted = Object.assign(Object.create(db.pool), {
    connect: async () => {
      const client = await connect()
      if (!(client as { counted?: boolean }).counted) {
        const query = client.query.bind(client)
        Object.assign(client, {
          counted: true,
          query: (...args: Parameters<typeof query>) => {
            sent++
            return query(...args)
          },
        })
      }
      return client
    },
    query: (...args: Parameters<typeof db.pool.query>) => {
      sent++
      return db.pool.query(...args)
    },
  }) as typeof db.pool
  const store = postgresStore({ pool: counted, logger: false })
  await store.ready()
  // The floor has a pool of its own, so its queries are never counted as the store's.
  const floorPool = new pg.Pool({ connectionString: db.url, max: 20 })
  return {
    name: 'postgres',
    async floor(i) {
      const client = await floorPool.connect()
      try {
        await client.query('BEGIN')
        await client.query('INSERT INTO ledger VALUES ($1, $2)', [`floor_${i}`, '9.09'])
        await client.query('COMMIT')
      } finally {
        client.release()
      }
    },
    async store(i) {
      const begun = await store.begin({
        eventId: `evt_bench_${i}`,
        // A conversion of its own per event: the floor has no ordering to wait for either.
        conversionId: 5_000_000 + i,
        order: 1_000_000 + i,
      })
      if (begun.status !== 'claimed') throw new Error(`unexpected ${begun.status}`)
      await begun.claim.tx?.query('INSERT INTO ledger VALUES ($1, $2)', [`store_${i}`, '9.09'])
      if (!(await store.commit(begun.claim))) throw new Error('not committed')
    },
    sent: () => sent,
    async close() {
      await floorPool.end()
      await db.drop()
    },
  }
}

async function bench(target: Target) {
  const floors: Run[] = []
  const stores: Run[] = []
  // Warm-up: connections opened, plans and functions cached, on ids of their own.
  await measure(target.floor, 10_000_000, WARMUP)
  await measure(target.store, 10_000_000, WARMUP)
  let offset = 0
  const sentBefore = target.sent()
  for (let round = 0; round < ROUNDS; round++) {
    floors.push(await measure(target.floor, offset))
    stores.push(await measure(target.store, offset))
    offset += EVENTS
  }
  // Every delivery's own INSERT went through the same clients: take it out.
  const roundTrips = (target.sent() - sentBefore - ROUNDS * EVENTS) / (ROUNDS * EVENTS)
  const floor = {
    perSecond: median(floors, 'perSecond'),
    p50: median(floors, 'p50'),
    p99: median(floors, 'p99'),
  }
  const store = {
    perSecond: median(stores, 'perSecond'),
    p50: median(stores, 'p50'),
    p99: median(stores, 'p99'),
  }
  return { name: target.name, floor, store, roundTrips, ratio: store.perSecond / floor.perSecond }
}

const results = []
for (const make of [postgresTarget]) {
  const target = await make()
  try {
    results.push(await bench(target))
  } finally {
    await target.close()
  }
}

const fixed = (n: number, digits = 2) => n.toFixed(digits)
console.log(
  `concurrency ${CONCURRENCY}, ${EVENTS} events a round, median of ${ROUNDS} rounds${QUICK ? ' (quick: figures mean nothing)' : ''}\n`,
)
console.log(
  '| store | floor ev/s | store ev/s | ratio (target >= 0.7) | floor p50/p99 ms | store p50/p99 ms | added p50/p99 ms | store round trips (target <= 4) |',
)
console.log('|---|---:|---:|---:|---:|---:|---:|---:|')
for (const r of results) {
  console.log(
    `| ${r.name} | ${fixed(r.floor.perSecond, 0)} | ${fixed(r.store.perSecond, 0)} | ${fixed(r.ratio)} | ${fixed(r.floor.p50)} / ${fixed(r.floor.p99)} | ${fixed(r.store.p50)} / ${fixed(r.store.p99)} | ${fixed(r.store.p50 - r.floor.p50)} / ${fixed(r.store.p99 - r.floor.p99)} | ${fixed(r.roundTrips)} |`,
  )
}
const out = process.env.BENCH_RESULTS ?? new URL('results/sql.json', import.meta.url).pathname
writeFileSync(
  out,
  `${JSON.stringify(
    {
      command: 'npm run bench:sql',
      quick: QUICK,
      ratios: Object.fromEntries(
        results.map((r) => [`${r.name}.store/floor`, Number(fixed(r.ratio, 3))]),
      ),
      targets: Object.fromEntries(
        results.flatMap((r) => [
          [`${r.name}.store/floor >= 0.7`, 0.7],
          [`${r.name}.roundTrips <= 4`, 4],
        ]),
      ),
      roundTrips: Object.fromEntries(results.map((r) => [r.name, Number(fixed(r.roundTrips, 2))])),
      results,
    },
    null,
    2,
  )}\n`,
)
process.exit(0)

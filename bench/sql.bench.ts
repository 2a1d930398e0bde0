/**
 * The SQL stores against a bare transaction on the same database, in one run:
 * events/s and p50/p99 latency at concurrency 16 of
 *   floor: take a client, BEGIN; INSERT the effect; COMMIT, give it back;
 *   store: begin (claim), the same INSERT through ctx.tx, commit,
 * and the store's own round trips per delivery (every query its clients send,
 * the handler's INSERT excluded). Targets: at least 0.7 of the floor's events/s,
 * at most 4 round trips.
 *
 * `npm run bench:sql` (the machine's PostgreSQL and MariaDB, as the tests use them).
 * Each database is created for the run and dropped at the end. BENCH_QUICK=1 runs
 * tiny rounds (the guard test); BENCH_RESULTS names the JSON file (default
 * bench/results/sql.json).
 */
import type * as MysqlPackage from '@affiliate-webhooks/mysql'
import type * as PostgresPackage from '@affiliate-webhooks/postgres'
import mysql from 'mysql2/promise'
import pg from 'pg'
import { createMysqlTestDatabase } from '../test/mysql-db.js'
import { createPostgresTestDatabase } from '../test/postgres-db.js'
import { updateReadme, writeResults } from './results.js'

const built = (path: string) => new URL(`../packages/${path}`, import.meta.url).href
const { postgresStore } = (await import(built('postgres/dist/index.js'))) as typeof PostgresPackage
const { mysqlStore } = (await import(built('mysql/dist/index.js'))) as typeof MysqlPackage

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

async function mysqlTarget(): Promise<Target> {
  const db = await createMysqlTestDatabase({ connectionLimit: 20 })
  await db.pool.query(
    'CREATE TABLE ledger (event_id VARCHAR(64) PRIMARY KEY, amount DECIMAL(12, 2) NOT NULL) ENGINE=InnoDB',
  )
  let sent = 0
  // mysql2's promise pool: every query or execute on its connections is one round trip.
  const getConnection = db.pool.getConnection.bind(db.pool)
  const counted = Object.assign(Object.create(db.pool), {
    getConnection: async () => {
      const connection = await getConnection()
      if (!(connection as { counted?: boolean }).counted) {
        const query = connection.query.bind(connection)
        const execute = connection.execute.bind(connection)
        Object.assign(connection, {
          counted: true,
          query: (...args: Parameters<typeof query>) => {
            sent++
            return query(...args)
          },
          execute: (...args: Parameters<typeof execute>) => {
            sent++
            return execute(...args)
          },
        })
      }
      return connection
    },
    query: (...args: Parameters<typeof db.pool.query>) => {
      sent++
      return db.pool.query(...args)
    },
    execute: (...args: Parameters<typeof db.pool.execute>) => {
      sent++
      return db.pool.execute(...args)
    },
  }) as typeof db.pool
  const store = mysqlStore({ pool: counted, logger: false })
  await store.ready()
  const floorPool = mysql.createPool({ uri: db.url, connectionLimit: 20 })
  return {
    name: 'mysql',
    async floor(i) {
      const connection = await floorPool.getConnection()
      try {
        await connection.query('BEGIN')
        await connection.query('INSERT INTO ledger VALUES (?, ?)', [`floor_${i}`, '9.09'])
        await connection.query('COMMIT')
      } finally {
        connection.release()
      }
    },
    async store(i) {
      const begun = await store.begin({
        eventId: `evt_bench_${i}`,
        conversionId: 5_000_000 + i,
        order: 1_000_000 + i,
      })
      if (begun.status !== 'claimed') throw new Error(`unexpected ${begun.status}`)
      await begun.claim.tx?.query('INSERT INTO ledger VALUES (?, ?)', [`store_${i}`, '9.09'])
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
for (const make of [postgresTarget, mysqlTarget]) {
  const target = await make()
  try {
    results.push(await bench(target))
  } finally {
    await target.close()
  }
}

const fixed = (n: number, digits = 2) => n.toFixed(digits)
const report = [
  `Command: npm run bench:sql; concurrency ${CONCURRENCY}, ${EVENTS} events a round, median of ${ROUNDS} rounds${QUICK ? ' (quick: figures mean nothing)' : ''}, ${new Date().toISOString().slice(0, 10)}`,
  '',
  '| store | floor ev/s | store ev/s | ratio (target >= 0.7) | floor p50 / p99 ms | store p50 / p99 ms | added p50 / p99 ms | store round trips (target <= 4) |',
  '|---|---:|---:|---:|---:|---:|---:|---:|',
  ...results.map(
    (r) =>
      `| ${r.name} | ${fixed(r.floor.perSecond, 0)} | ${fixed(r.store.perSecond, 0)} | ${fixed(r.ratio)} | ${fixed(r.floor.p50)} / ${fixed(r.floor.p99)} | ${fixed(r.store.p50)} / ${fixed(r.store.p99)} | ${fixed(r.store.p50 - r.floor.p50)} / ${fixed(r.store.p99 - r.floor.p99)} | ${fixed(r.roundTrips)} |`,
  ),
]
console.log(report.join('\n'))
writeResults(
  'sql',
  {
    ratios: Object.fromEntries(results.map((r) => [`${r.name}: store / floor, events/s`, r.ratio])),
    targets: Object.fromEntries(
      results.flatMap((r) => [
        [`${r.name}: store / floor, events/s (>= 0.7)`, r.ratio],
        [`${r.name}: store round trips per delivery (<= 4)`, r.roundTrips],
      ]),
    ),
  },
  QUICK,
)
updateReadme('sql', report, QUICK)
process.exit(0)

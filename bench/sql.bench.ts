/**
 * The SQL stores against a bare transaction on the same database, in one run:
 * events/s and p50/p99 latency at concurrency 16 of
 *   floor: take a client, BEGIN; INSERT the effect; COMMIT, give it back;
 *   store: begin (claim), the same INSERT through ctx.tx, commit,
 * and the store's own round trips per delivery (every query its clients send,
 * the handler's INSERT excluded). Targets (issue 31, one row per conversion):
 * Postgres at least 0.7 of its floor's events/s and at most 1.4 times its node
 * CPU per delivery; MariaDB at least 0.6; round trips per delivery, the
 * handler's INSERT included, no more than the floor's 3.
 *
 * Each driver's store against a bare transaction on the same driver: pg and
 * postgres.js (at least 0.7), mysql2 on MariaDB (0.6), SQLite through
 * node:sqlite and better-sqlite3 (0.7, both at synchronous FULL on one WAL file),
 * Prisma 7 on PostgreSQL (@prisma/adapter-pg) and on MariaDB (@prisma/adapter-mariadb)
 * against a bare Prisma interactive transaction (`$transaction(async (tx) => INSERT)`)
 * on the same database: the database's target, 0.7 and 0.6.
 *
 * `npm run bench:sql` (the machine's PostgreSQL and MariaDB, as the tests use them).
 * Each database is created for the run and dropped at the end. BENCH_QUICK=1 runs
 * tiny rounds (the guard test); BENCH_RESULTS names the JSON file (default
 * bench/results/sql.json); BENCH_ONLY=postgres.js runs only the targets whose
 * name contains it.
 */
import { readdirSync, readFileSync } from 'node:fs'
import type { EventStore } from '@affiliate-webhooks/core'
import type * as MysqlPackage from '@affiliate-webhooks/mysql'
import type * as PostgresPackage from '@affiliate-webhooks/postgres'
import type * as PrismaPackage from '@affiliate-webhooks/prisma'
import type * as SqlitePackage from '@affiliate-webhooks/sqlite'
import mysql from 'mysql2/promise'
import pg from 'pg'
import postgresJs from 'postgres'
import {
  type PrismaClientFor,
  type PrismaTestProvider,
  prismaClientPath,
} from '../test/sql/prisma-clients.js'
import { createSqliteTestFile, openSqlite, type SqliteLibrary } from '../test/sql/sqlite-db.js'
import { createMysqlTestDatabase } from '../test/support/mysql-db.js'
import { createPostgresTestDatabase } from '../test/support/postgres-db.js'
import { updateReadme, writeResults } from './results.js'

const built = (path: string) => new URL(`../packages/${path}`, import.meta.url).href
const { postgresStore } = (await import(built('postgres/dist/index.js'))) as typeof PostgresPackage
const { mysqlStore } = (await import(built('mysql/dist/index.js'))) as typeof MysqlPackage
const { sqliteStore } = (await import(built('sqlite/dist/index.js'))) as typeof SqlitePackage
const { prismaStore } = (await import(built('prisma/dist/index.js'))) as typeof PrismaPackage

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
  /**
   * The floor plus one upsert of a mark row (a conversion's watermark) in the
   * same transaction, sent the way the store sends its claim: the least an
   * exactly-once store that keeps a mark in the database writes, and nothing
   * else (no bounds, no wait, no check).
   */
  mark(i: number): Promise<void>
  /** Queries the store's clients sent so far, the handler's included (NaN: not counted). */
  sent(): number
  /** The database server's processes' name, for their CPU time ('' for SQLite, in this process). */
  server: string
  close(): Promise<void>
}

interface Run {
  perSecond: number
  p50: number
  p99: number
  /** CPU time per delivery, µs: this process, and the database server's processes. */
  nodeUs: number
  serverUs: number
}

/** Events/s of the store over its floor's, at least: by database and driver. */
const RATIO_TARGET: Record<string, number> = {
  postgres: 0.7,
  'postgres (postgres.js)': 0.7,
  mysql: 0.6,
  'sqlite (node:sqlite)': 0.7,
  'sqlite (better-sqlite3)': 0.7,
  'postgres (Prisma)': 0.7,
  'mysql (Prisma)': 0.6,
}
/** Node CPU per delivery of the store over its floor's, at most (Postgres). */
const NODE_CPU_TARGET = 1.4
/** The floor's round trips: BEGIN, INSERT, COMMIT. */
const FLOOR_ROUND_TRIPS = 3

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] as number

/** CPU ms so far of every process named `name` (the database server). */
function serverCpuMs(name: string): number {
  if (name === '') return 0
  const tick = 1000 / 100 // USER_HZ
  let ticks = 0
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue
    try {
      if (!readFileSync(`/proc/${pid}/comm`, 'utf8').startsWith(name)) continue
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      ticks += Number(fields[11]) + Number(fields[12])
    } catch {
      // Ended between the listing and the read.
    }
  }
  return ticks * tick
}

async function measure(
  target: Target,
  work: (i: number) => Promise<void>,
  offset: number,
  count = EVENTS,
): Promise<Run> {
  const latencies: number[] = []
  let next = 0
  const cpu = process.cpuUsage()
  const server = serverCpuMs(target.server)
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
  const used = process.cpuUsage(cpu)
  latencies.sort((a, b) => a - b)
  return {
    perSecond: count / seconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    nodeUs: (used.user + used.system) / count,
    serverUs: ((serverCpuMs(target.server) - server) * 1000) / count,
  }
}

const median = (runs: Run[], key: keyof Run) => {
  const values = runs.map((run) => run[key]).sort((a, b) => a - b)
  return values[Math.floor(values.length / 2)] as number
}

/**
 * Makes the listed methods of `target` count each call, in place (a driver's
 * connection is an event emitter whose state must stay its own); once per object.
 */
function countCalls<T extends object>(target: T, methods: readonly string[], count: () => void): T {
  const marked = target as T & { countedCalls?: true }
  if (marked.countedCalls) return target
  const record = target as unknown as Record<string, (...args: unknown[]) => unknown>
  for (const name of methods) {
    const method = record[name]
    if (typeof method !== 'function') continue
    record[name] = (...args: unknown[]) => {
      count()
      return method.apply(target, args)
    }
  }
  marked.countedCalls = true
  return target
}

/** The mark table of the `mark` workload: the store's conversions table, without the store. */
const MARK_DDL = {
  postgres:
    'CREATE TABLE bench_marks (conversion_id bigint PRIMARY KEY, watermark bigint NOT NULL, event_id text NOT NULL, expires_at timestamptz NOT NULL)',
  mysql:
    'CREATE TABLE bench_marks (conversion_id BIGINT NOT NULL PRIMARY KEY, watermark BIGINT NOT NULL, event_id VARBINARY(255) NOT NULL, expires_at BIGINT NOT NULL) ENGINE=InnoDB',
  sqlite:
    'CREATE TABLE bench_marks (conversion_id INTEGER PRIMARY KEY, watermark INTEGER NOT NULL, event_id TEXT NOT NULL, expires_at INTEGER NOT NULL)',
}
/** The mark's upsert: raised only when newer. Parameters: conversion, order, event. */
const MARK_UPSERT = {
  postgres: `INSERT INTO bench_marks AS m VALUES ($1, $2, $3, now() + interval '1 day')
     ON CONFLICT (conversion_id) DO UPDATE SET watermark = EXCLUDED.watermark, event_id = EXCLUDED.event_id, expires_at = EXCLUDED.expires_at
     WHERE m.watermark < EXCLUDED.watermark`,
  mysql: `INSERT INTO bench_marks VALUES (?, ?, ?, 0) ON DUPLICATE KEY UPDATE
     watermark = IF(watermark < ?, ?, watermark)`,
  sqlite: `INSERT INTO bench_marks VALUES (?, ?, ?, 0) ON CONFLICT (conversion_id) DO UPDATE SET
     watermark = excluded.watermark, event_id = excluded.event_id WHERE watermark < excluded.watermark`,
}
/** The mark workload's ids: a conversion of its own per event, as the store's. */
const markOf = (i: number) => [5_000_000 + i, 1_000_000 + i, `evt_mark_${i}`] as const

/** What differs between the two databases; the workloads are the same. */
interface Driver<Pool extends object, Conn extends object> {
  name: string
  server: string
  makeDb(): Promise<{ url: string; pool: Pool; drop(): Promise<void> }>
  ledgerDdl: string
  insertSql: string
  markDdl: string
  /** BEGIN and the mark's upsert in one query, as the store sends BEGIN with its claim. */
  markBegin(i: number): { sql: string; values: unknown[] }
  /** The pool's own queries, and the method that hands out a connection. */
  queryMethods: readonly string[]
  checkout: 'connect' | 'getConnection'
  makeStore(pool: Pool): { ready(): Promise<void> } & Pick<EventStore<Conn>, 'begin' | 'commit'>
  floorPool(url: string): Pool & { end(): Promise<void> }
}

async function targetOf<Pool extends object, Conn extends object>(
  driver: Driver<Pool, Conn>,
): Promise<Target> {
  type Queryable = { query(sql: string, values?: unknown[]): Promise<unknown> }
  type Checkout = () => Promise<Queryable & { release(): void }>
  const db = await driver.makeDb()
  await (db.pool as unknown as Queryable).query(driver.ledgerDdl)
  await (db.pool as unknown as Queryable).query(driver.markDdl)
  let sent = 0
  const count = () => {
    sent++
  }
  // Every query a store's client sends is one round trip: the store's own
  // statements go together in one query each.
  const checkout = (db.pool as unknown as Record<string, Checkout>)[driver.checkout] as Checkout
  const counted = Object.create(db.pool) as Record<string, unknown>
  for (const name of driver.queryMethods) {
    const method = (db.pool as unknown as Record<string, (...args: unknown[]) => unknown>)[name]
    counted[name] = (...args: unknown[]) => {
      count()
      return method?.apply(db.pool, args)
    }
  }
  counted[driver.checkout] = async () =>
    countCalls(await checkout.call(db.pool), ['query', 'execute'], count)
  const store = driver.makeStore(counted as Pool)
  await store.ready()
  // The floor has a pool of its own, so its queries are never counted as the store's.
  const floorPool = driver.floorPool(db.url)
  const floorCheckout = (floorPool as unknown as Record<string, Checkout>)[
    driver.checkout
  ] as Checkout
  return {
    name: driver.name,
    server: driver.server,
    async floor(i) {
      const connection = await floorCheckout.call(floorPool)
      try {
        await connection.query('BEGIN')
        await connection.query(driver.insertSql, [`floor_${i}`, '9.09'])
        await connection.query('COMMIT')
      } finally {
        connection.release()
      }
    },
    async mark(i) {
      const connection = await floorCheckout.call(floorPool)
      try {
        const begin = driver.markBegin(i)
        await connection.query(begin.sql, begin.values)
        await connection.query(driver.insertSql, [`mark_${i}`, '9.09'])
        await connection.query('COMMIT')
      } finally {
        connection.release()
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
      const tx = begun.claim.tx as unknown as Queryable
      await tx.query(driver.insertSql, [`store_${i}`, '9.09'])
      if (!(await store.commit(begun.claim))) throw new Error('not committed')
    },
    sent: () => sent,
    async close() {
      await floorPool.end()
      await db.drop()
    },
  }
}

const postgres: Driver<pg.Pool, pg.PoolClient> = {
  name: 'postgres',
  server: 'postgres',
  makeDb: () => createPostgresTestDatabase(),
  ledgerDdl: 'CREATE TABLE ledger (event_id text PRIMARY KEY, amount numeric NOT NULL)',
  insertSql: 'INSERT INTO ledger VALUES ($1, $2)',
  markDdl: MARK_DDL.postgres,
  // The store's claim goes as one simple-protocol query, values written in.
  markBegin: (i) => {
    const [conversion, order, event] = markOf(i)
    const upsert = MARK_UPSERT.postgres.replace('$1', String(conversion))
    return {
      sql: `BEGIN ISOLATION LEVEL READ COMMITTED; ${upsert.replace('$2', String(order)).replace('$3', `'${event}'`)}`,
      values: [],
    }
  },
  queryMethods: ['query'],
  checkout: 'connect',
  makeStore: (pool) => postgresStore({ pool, logger: false }),
  floorPool: (url) => {
    const pool = new pg.Pool({ connectionString: url, max: 20 })
    // An idle client the server ends (the database dropped at the end) must not crash the run.
    pool.on('error', () => {})
    return pool
  },
}

const mariadb: Driver<mysql.Pool, mysql.PoolConnection> = {
  name: 'mysql',
  server: 'mariadbd',
  makeDb: () => createMysqlTestDatabase({ connectionLimit: 20 }),
  ledgerDdl:
    'CREATE TABLE ledger (event_id VARCHAR(64) PRIMARY KEY, amount DECIMAL(12, 2) NOT NULL) ENGINE=InnoDB',
  insertSql: 'INSERT INTO ledger VALUES (?, ?)',
  markDdl: MARK_DDL.mysql,
  // One query, as the store's CALL (the floor's pool runs several statements in one).
  markBegin: (i) => {
    const [conversion, order, event] = markOf(i)
    return {
      sql: `START TRANSACTION; ${MARK_UPSERT.mysql}`,
      values: [conversion, order, event, order, order],
    }
  },
  queryMethods: ['query', 'execute'],
  checkout: 'getConnection',
  makeStore: (pool) => mysqlStore({ pool, logger: false }),
  floorPool: (url) => mysql.createPool({ uri: url, connectionLimit: 20, multipleStatements: true }),
}

/** postgres.js: the floor is `sql.begin` with the INSERT; the store's ctx.tx is the transaction's sql. */
async function postgresJsTarget(): Promise<Target> {
  const db = await createPostgresTestDatabase()
  await db.pool.query('CREATE TABLE ledger (event_id text PRIMARY KEY, amount numeric NOT NULL)')
  await db.pool.query(MARK_DDL.postgres)
  const storeSql = postgresJs(db.url, { max: 20, onnotice: () => {} })
  const floorSql = postgresJs(db.url, { max: 20, onnotice: () => {} })
  const store = postgresStore({ sql: storeSql })
  await store.ready()
  return {
    name: 'postgres (postgres.js)',
    server: 'postgres',
    async floor(i) {
      await floorSql.begin((tx) => tx`INSERT INTO ledger VALUES (${`floor_${i}`}, ${'9.09'})`)
    },
    async mark(i) {
      await floorSql.begin(async (tx) => {
        await tx.unsafe(MARK_UPSERT.postgres, [...markOf(i)])
        await tx`INSERT INTO ledger VALUES (${`mark_${i}`}, ${'9.09'})`
      })
    },
    async store(i) {
      const begun = await store.begin({
        eventId: `evt_bench_${i}`,
        conversionId: 5_000_000 + i,
        order: 1_000_000 + i,
      })
      if (begun.status !== 'claimed') throw new Error(`unexpected ${begun.status}`)
      const tx = begun.claim.tx as postgresJs.TransactionSql
      await tx`INSERT INTO ledger VALUES (${`store_${i}`}, ${'9.09'})`
      if (!(await store.commit(begun.claim))) throw new Error('not committed')
    },
    // postgres.js sends BEGIN and COMMIT itself: its round trips are not counted here.
    sent: () => Number.NaN,
    async close() {
      await storeSql.end({ timeout: 1 })
      await floorSql.end({ timeout: 1 })
      await db.drop()
    },
  }
}

/**
 * SQLite on one library, one WAL file, synchronous FULL for both (the store's
 * level): the floor is BEGIN IMMEDIATE; INSERT; COMMIT on a connection of its
 * own, the store's deliveries take turns on theirs.
 */
async function sqliteTarget(library: SqliteLibrary): Promise<Target> {
  const file = createSqliteTestFile()
  const storeDb = openSqlite(library, file.file)
  storeDb.exec('CREATE TABLE ledger (event_id TEXT PRIMARY KEY, amount TEXT NOT NULL)')
  storeDb.exec(MARK_DDL.sqlite)
  const floorDb = openSqlite(library, file.file)
  floorDb.exec('PRAGMA synchronous = FULL')
  const store = sqliteStore({ database: storeDb })
  await store.ready()
  const insert = 'INSERT INTO ledger VALUES (?, ?)'
  return {
    name: `sqlite (${library})`,
    server: '',
    // The INSERT written the same way on both sides, as the other drivers send
    // their SQL text with each delivery: prepared, then run (a statement
    // prepared once for the floor only put its prepare, 3 to 6 µs, on the store).
    async floor(i) {
      floorDb.exec('BEGIN IMMEDIATE')
      floorDb.prepare(insert).run(`floor_${i}`, '9.09')
      floorDb.exec('COMMIT')
    },
    async mark(i) {
      floorDb.exec('BEGIN IMMEDIATE')
      floorDb.prepare(MARK_UPSERT.sqlite).run(...markOf(i))
      floorDb.prepare(insert).run(`mark_${i}`, '9.09')
      floorDb.exec('COMMIT')
    },
    async store(i) {
      const begun = await store.begin({
        eventId: `evt_bench_${i}`,
        conversionId: 5_000_000 + i,
        order: 1_000_000 + i,
      })
      if (begun.status !== 'claimed') throw new Error(`unexpected ${begun.status}`)
      ;(begun.claim.tx as typeof storeDb).prepare(insert).run(`store_${i}`, '9.09')
      if (!(await store.commit(begun.claim))) throw new Error('not committed')
    },
    sent: () => Number.NaN,
    async close() {
      storeDb.close()
      floorDb.close()
      file.drop()
    },
  }
}

type PrismaTx = PrismaPackage.PrismaRawQueries

/** A Prisma client of the generated test schema on one database, with `connections` in its pool. */
async function prismaOn(
  provider: PrismaTestProvider,
  url: string,
  connections: number,
): Promise<PrismaClientFor<PrismaTx>> {
  const { PrismaClient } = await import(await prismaClientPath(provider))
  if (provider === 'postgresql') {
    const { PrismaPg } = await import('@prisma/adapter-pg')
    return new PrismaClient({ adapter: new PrismaPg({ connectionString: url, max: connections }) })
  }
  const { PrismaMariaDb } = await import('@prisma/adapter-mariadb')
  const at = new URL(url)
  const adapter = new PrismaMariaDb({
    host: at.hostname,
    port: Number(at.port || 3306),
    user: decodeURIComponent(at.username),
    database: at.pathname.slice(1),
    connectionLimit: connections,
  })
  return new PrismaClient({ adapter })
}

/**
 * Prisma on one database: the floor is a bare interactive transaction with the
 * INSERT on a client of its own; the store's INSERT goes through ctx.tx.
 */
async function prismaTarget(provider: PrismaTestProvider): Promise<Target> {
  const postgresql = provider === 'postgresql'
  const db = postgresql
    ? await createPostgresTestDatabase()
    : await createMysqlTestDatabase({ connectionLimit: 4 })
  const admin = db.pool as unknown as { query(sql: string): Promise<unknown> }
  await admin.query(
    postgresql
      ? 'CREATE TABLE ledger (event_id text PRIMARY KEY, amount numeric NOT NULL)'
      : 'CREATE TABLE ledger (event_id VARCHAR(64) PRIMARY KEY, amount DECIMAL(12, 2) NOT NULL) ENGINE=InnoDB',
  )
  await admin.query(postgresql ? MARK_DDL.postgres : MARK_DDL.mysql)
  const insert = postgresql
    ? 'INSERT INTO ledger VALUES ($1, $2::numeric)'
    : 'INSERT INTO ledger VALUES (?, ?)'
  const storePrisma = await prismaOn(provider, db.url, 20)
  const floorPrisma = await prismaOn(provider, db.url, 20)
  const store = prismaStore({ prisma: storePrisma, logger: false })
  await store.ready()
  return {
    name: `${postgresql ? 'postgres' : 'mysql'} (Prisma)`,
    server: postgresql ? 'postgres' : 'mariadbd',
    async floor(i) {
      await floorPrisma.$transaction((tx) => tx.$executeRawUnsafe(insert, `floor_${i}`, '9.09'))
    },
    async mark(i) {
      const [conversion, order, event] = markOf(i)
      await floorPrisma.$transaction(async (tx) => {
        if (postgresql) await tx.$executeRawUnsafe(MARK_UPSERT.postgres, conversion, order, event)
        else await tx.$executeRawUnsafe(MARK_UPSERT.mysql, conversion, order, event, order, order)
        await tx.$executeRawUnsafe(insert, `mark_${i}`, '9.09')
      })
    },
    async store(i) {
      const begun = await store.begin({
        eventId: `evt_bench_${i}`,
        conversionId: 5_000_000 + i,
        order: 1_000_000 + i,
      })
      if (begun.status !== 'claimed') throw new Error(`unexpected ${begun.status}`)
      await (begun.claim.tx as PrismaTx).$executeRawUnsafe(insert, `store_${i}`, '9.09')
      if (!(await store.commit(begun.claim))) throw new Error('not committed')
    },
    // Prisma sends BEGIN and COMMIT itself: its round trips are not counted here.
    sent: () => Number.NaN,
    async close() {
      await storePrisma.$disconnect()
      await floorPrisma.$disconnect()
      await db.drop()
    },
  }
}

async function bench(target: Target) {
  const floors: Run[] = []
  const marks: Run[] = []
  const stores: Run[] = []
  // Warm-up: connections opened, plans and functions cached, on ids of their own.
  await measure(target, target.floor, 10_000_000, WARMUP)
  await measure(target, target.mark, 10_000_000, WARMUP)
  await measure(target, target.store, 10_000_000, WARMUP)
  let offset = 0
  const sentBefore = target.sent()
  // The order turns each round: the workload run after others meets the
  // database's background work (page flushing) that theirs left behind.
  const workloads = [
    { work: target.floor, runs: floors },
    { work: target.mark, runs: marks },
    { work: target.store, runs: stores },
  ]
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < workloads.length; k++) {
      const { work, runs } = workloads[(round + k) % workloads.length] as (typeof workloads)[0]
      runs.push(await measure(target, work, offset))
    }
    offset += EVENTS
  }
  // Every delivery's own INSERT went through the same clients: take it out.
  const roundTrips = (target.sent() - sentBefore - ROUNDS * EVENTS) / (ROUNDS * EVENTS)
  const summary = (runs: Run[]) =>
    Object.fromEntries(
      (['perSecond', 'p50', 'p99', 'nodeUs', 'serverUs'] as const).map((key) => [
        key,
        median(runs, key),
      ]),
    ) as unknown as Run
  const floor = summary(floors)
  const mark = summary(marks)
  const store = summary(stores)
  return {
    name: target.name,
    floor,
    mark,
    store,
    roundTrips,
    ratio: store.perSecond / floor.perSecond,
    markRatio: mark.perSecond / floor.perSecond,
  }
}

const results: Awaited<ReturnType<typeof bench>>[] = []
const targets: (() => Promise<Target>)[] = [
  () => targetOf(postgres as Driver<object, object>),
  postgresJsTarget,
  () => targetOf(mariadb as Driver<object, object>),
  () => sqliteTarget('node:sqlite'),
  () => sqliteTarget('better-sqlite3'),
  () => prismaTarget('postgresql'),
  () => prismaTarget('mysql'),
]
// BENCH_ONLY=name runs only the targets whose name contains it (one driver again, after a change).
const only = process.env.BENCH_ONLY
for (const make of targets) {
  const target = await make()
  if (only !== undefined && !target.name.includes(only)) {
    await target.close()
    continue
  }
  try {
    results.push(await bench(target))
  } finally {
    await target.close()
  }
}

const fixed = (n: number, digits = 2) => n.toFixed(digits)
const nodeRatio = (r: Awaited<ReturnType<typeof bench>>) => r.store.nodeUs / r.floor.nodeUs
const report = [
  `Command: npm run bench:sql; concurrency ${CONCURRENCY}, ${EVENTS} events a round, median of ${ROUNDS} rounds${QUICK ? ' (quick: figures mean nothing)' : ''}, ${new Date().toISOString().slice(0, 10)}`,
  '',
  '| store | floor ev/s | store ev/s | ratio (target) | floor + mark row / floor | floor p50 / p99 ms | store p50 / p99 ms | added p50 / p99 ms | round trips, handler included (floor: 3) |',
  '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ...results.map(
    (r) =>
      `| ${r.name} | ${fixed(r.floor.perSecond, 0)} | ${fixed(r.store.perSecond, 0)} | ${fixed(r.ratio)} (>= ${RATIO_TARGET[r.name]}) | ${fixed(r.markRatio)} | ${fixed(r.floor.p50)} / ${fixed(r.floor.p99)} | ${fixed(r.store.p50)} / ${fixed(r.store.p99)} | ${fixed(r.store.p50 - r.floor.p50)} / ${fixed(r.store.p99 - r.floor.p99)} | ${Number.isNaN(r.roundTrips) ? 'not counted' : fixed(r.roundTrips + 1)} |`,
  ),
  '',
  "Floor + mark row: the floor's transaction with one upsert of a conversion's watermark in a table of the same shape as the store's, sent with BEGIN as the store sends its claim: what an exactly-once store that keeps its mark in the database cannot do without, and nothing else.",
  '',
  "Where the time goes: CPU per delivery (this process; the database server), µs, the store's node CPU over the floor's, and the ratio of the two totals. On two cores both are busy, so events/s follows the CPU ratio.",
  '',
  `| store | floor node / server µs | floor + mark row node / server µs | store node / server µs | node CPU store / floor (postgres target <= ${NODE_CPU_TARGET}) | CPU ratio floor / store |`,
  '|---|---:|---:|---:|---:|---:|',
  ...results.map(
    (r) =>
      `| ${r.name} | ${fixed(r.floor.nodeUs, 0)} / ${fixed(r.floor.serverUs, 0)} | ${fixed(r.mark.nodeUs, 0)} / ${fixed(r.mark.serverUs, 0)} | ${fixed(r.store.nodeUs, 0)} / ${fixed(r.store.serverUs, 0)} | ${fixed(nodeRatio(r))} | ${fixed((r.floor.nodeUs + r.floor.serverUs) / (r.store.nodeUs + r.store.serverUs))} |`,
  ),
]
console.log(report.join('\n'))
writeResults(
  'sql',
  {
    ratios: Object.fromEntries(
      results.flatMap((r) => [
        [`${r.name}: store / floor, events/s`, r.ratio],
        [`${r.name}: floor + mark row / floor, events/s`, r.markRatio],
      ]),
    ),
    targets: Object.fromEntries(
      results.flatMap((r) => [
        [`${r.name}: store / floor, events/s (>= ${RATIO_TARGET[r.name]})`, r.ratio],
        ...(Number.isNaN(r.roundTrips)
          ? []
          : [
              [
                `${r.name}: round trips per delivery, handler included (<= ${FLOOR_ROUND_TRIPS})`,
                r.roundTrips + 1,
              ],
            ]),
        ...(r.name === 'postgres'
          ? [
              [
                `${r.name}: node CPU per delivery, store / floor (<= ${NODE_CPU_TARGET})`,
                nodeRatio(r),
              ],
            ]
          : []),
      ]),
    ),
  },
  QUICK,
)
updateReadme('sql', report, QUICK)
process.exit(0)

/**
 * PostgreSQL for tests: a fresh database per test file on the machine's server
 * (dropped at the end), and private servers on a spare port for tests that stop
 * and restart one (initdb + pg_ctl from PG_BIN, run as the postgres user when
 * the tests run as root, which PostgreSQL refuses to be).
 */
import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import { freePort } from './redis-servers.js'

const run = promisify(execFile)

/** The machine's server: trust authentication for the postgres user. */
export const POSTGRES_URL =
  process.env.POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
export const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin'

/**
 * postgres.js options for a client a test takes through an outage or a
 * failover. postgres.js 3.4.9 starts each new connection with a query of its
 * own for the server's array types and drops that query's promise
 * (porsager/postgres#1192, #1223): a connection cut or ended while it runs
 * (the test's `sql.end({ timeout })` in teardown, a server killed during a
 * reconnect) rejects it with nothing listening, and vitest fails the whole run
 * on that unhandled rejection. The stores send no array parameters, so the
 * clients skip the query.
 */
export const THROUGH_OUTAGES = { fetch_types: false } as const

export interface TestDatabase {
  /** Connection string of the new database. */
  url: string
  database: string
  /** A pool on it, ended by drop(). */
  pool: pg.Pool
  drop(): Promise<void>
}

const withDatabase = (url: string, database: string) => {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

/** A new, empty database named for this run, with a pool on it. */
export async function createPostgresTestDatabase(serverUrl = POSTGRES_URL): Promise<TestDatabase> {
  const database = `aw_test_${randomUUID().replaceAll('-', '').slice(0, 12)}`
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${database}`)
  await admin.end()
  const url = withDatabase(serverUrl, database)
  const pool = new pg.Pool({ connectionString: url, max: 20 })
  pool.on('error', () => {})
  return {
    url,
    database,
    pool,
    async drop() {
      // Claims a test left open end with their sessions below, not here.
      await Promise.race([pool.end().catch(() => {}), new Promise((r) => setTimeout(r, 1000))])
      const again = new pg.Client({ connectionString: serverUrl })
      await again.connect()
      await again.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
      await again.end()
    },
  }
}

export interface PostgresServer {
  port: number
  /** Connection string of its `postgres` database. */
  url: string
  /** Its data folder (postmaster.pid is in it). */
  data: string
  /** pg_ctl stop -m immediate: as a crash, every session gone. */
  stop(): Promise<void>
  start(): Promise<void>
  /**
   * SIGSTOP (true) or SIGCONT (false) to the postmaster and every one of its
   * processes: a database that stops answering without closing a connection.
   */
  freeze(frozen: boolean): void
  /** Stops it for good and removes its files. */
  destroy(): Promise<void>
}

export const asPostgres = (command: string, args: string[]) =>
  process.getuid?.() === 0
    ? run('runuser', ['-u', 'postgres', '--', command, ...args])
    : run(command, args)

/** The processes whose parent is `pid`, from /proc. */
function childrenOf(pid: number): number[] {
  const children: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (parent === pid) children.push(Number(entry))
    } catch {
      // Ended between the listing and the read.
    }
  }
  return children
}

/** Sends `signal` to a running server's postmaster and every process it started. */
function signalServer(data: string, signal: NodeJS.Signals): void {
  const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0])
  for (const pid of [postmaster, ...childrenOf(postmaster)]) process.kill(pid, signal)
}

/** A private server on a spare loopback port, in a temp directory. */
export async function startPrivatePostgres(): Promise<PostgresServer> {
  return privateServer(async (data) => {
    await asPostgres(`${PG_BIN}/initdb`, ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync'])
  })
}

/**
 * A streaming standby of `primary` (a private server: initdb's defaults allow
 * replication from loopback), on a spare port of its own: pg_basebackup -R, then
 * started with `cluster_name` = `name`, which the primary's pg_stat_replication
 * shows as its application_name. Resolves once the primary sees it streaming.
 */
export async function startPrivateStandby(
  primary: PostgresServer,
  name = 'standby1',
): Promise<PostgresServer> {
  const standby = await privateServer(async (data) => {
    await asPostgres(`${PG_BIN}/pg_basebackup`, [
      ...['-D', data, '-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres'],
      ...['-R', '-X', 'stream', '--no-sync'],
    ])
  }, `-c cluster_name=${name}`)
  const client = new pg.Client({ connectionString: primary.url })
  await client.connect()
  try {
    const deadline = Date.now() + 15_000
    for (;;) {
      const { rows } = await client.query(
        "SELECT 1 FROM pg_stat_replication WHERE application_name = $1 AND state = 'streaming'",
        [name],
      )
      if (rows.length > 0) break
      if (Date.now() > deadline)
        throw new Error(`standby ${name} is not streaming from the primary`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  } catch (error) {
    await standby.destroy()
    throw error
  } finally {
    await client.end()
  }
  return standby
}

/** A server whose data directory `create` makes, started on a spare loopback port. */
async function privateServer(
  create: (data: string) => Promise<void>,
  settings = '',
): Promise<PostgresServer> {
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), `pg-${port}-`))
  chmodSync(dir, 0o777)
  const data = join(dir, 'data')
  if (process.getuid?.() === 0) await run('chown', ['postgres', dir])
  try {
    await create(data)
  } catch (error) {
    rmSync(dir, { recursive: true, force: true })
    throw error
  }
  const start = async () => {
    await asPostgres(`${PG_BIN}/pg_ctl`, [
      '-D',
      data,
      '-w',
      '-l',
      join(dir, 'log'),
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off ${settings}`,
      'start',
    ])
  }
  const stop = async () => {
    await asPostgres(`${PG_BIN}/pg_ctl`, ['-D', data, '-m', 'immediate', 'stop']).catch(() => {})
  }
  try {
    await start()
  } catch (error) {
    await stop()
    rmSync(dir, { recursive: true, force: true })
    throw error
  }
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    data,
    stop,
    start,
    freeze(frozen) {
      signalServer(data, frozen ? 'SIGSTOP' : 'SIGCONT')
    },
    async destroy() {
      // A stopped postmaster cannot shut down: woken first, if it was frozen.
      try {
        signalServer(data, 'SIGCONT')
      } catch {
        // Not running.
      }
      await stop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/**
 * MariaDB for tests: a throwaway database on the server at `MYSQL_URL` (default
 * the machine's, mysql://root@127.0.0.1:3306), or a private server of its own on
 * a spare port for tests that stop, kill and restart it (outages).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import mysql, { type Pool } from 'mysql2/promise'
import { freePort } from './redis-servers.js'

const run = promisify(execFile)

/** The shared server, as Postgres and Redis take `POSTGRES_URL` and `REDIS_URL`; no database in it. */
export const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306'

/** Where a private server listens: tests only ever talk to loopback. */
const LOOPBACK = '127.0.0.1'

/** The parts of a server's URL that a connection and the `mariadb` client need. */
export interface MysqlServer {
  host: string
  port: number
  user: string
  password?: string
}

/** The host, port, user and password of `url` (port 3306 and user root when it names none). */
export function mysqlServerOf(url = MYSQL_URL): MysqlServer {
  const parsed = new URL(url)
  return {
    host: parsed.hostname,
    port: parsed.port === '' ? 3306 : Number(parsed.port),
    user: parsed.username === '' ? 'root' : decodeURIComponent(parsed.username),
    ...(parsed.password === '' ? {} : { password: decodeURIComponent(parsed.password) }),
  }
}

/** `url` with `database` as its path. */
function withDatabase(url: string, database: string): string {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

export interface MysqlTestDatabase {
  /** The server's URL with the database as its path, e.g. `mysql://root@127.0.0.1:3306/<database>`. */
  url: string
  database: string
  /** A pool on the database, ended by drop(). */
  pool: Pool
  /** Ends the pool and drops the database. */
  drop(): Promise<void>
}

/**
 * A database with a random name on the server at `serverUrl` (default {@link MYSQL_URL}).
 * Its pool has `connectionLimit` connections (default 20): every open claim holds one.
 */
export async function createMysqlTestDatabase({
  serverUrl = MYSQL_URL,
  connectionLimit = 20,
}: {
  serverUrl?: string
  connectionLimit?: number
} = {}): Promise<MysqlTestDatabase> {
  const server = mysqlServerOf(serverUrl)
  const database = `aw_test_${randomUUID().replaceAll('-', '').slice(0, 12)}`
  const admin = await mysql.createConnection(server)
  try {
    await admin.query(`CREATE DATABASE \`${database}\``)
  } finally {
    await admin.end()
  }
  const url = withDatabase(serverUrl, database)
  const pool = mysql.createPool({ ...server, database, connectionLimit })
  return {
    url,
    database,
    pool,
    async drop() {
      await pool.end().catch(() => {})
      const again = await mysql.createConnection(server)
      try {
        await again.query(`DROP DATABASE IF EXISTS \`${database}\``)
      } finally {
        await again.end()
      }
    },
  }
}

export interface PrivateMariadb {
  port: number
  /** `mysql://root@127.0.0.1:<port>/aw`: a database `aw` exists on it. */
  url: string
  /** SIGTERM, waiting for a clean shutdown. */
  stop(): Promise<void>
  /** SIGKILL: the server dies as in a crash. */
  kill(): Promise<void>
  /** Starts it again on the same port and data (after stop or kill; kills it first if running). */
  restart(): Promise<void>
  /** SIGSTOP: the server hangs (connections stay open, nothing answers) until thaw(). */
  freeze(): Promise<void>
  /** SIGCONT after freeze(). */
  thaw(): Promise<void>
  /** Kills it and removes its data directory: call it when the test is done. */
  dispose(): Promise<void>
}

let template: Promise<string> | undefined

/** One freshly installed data directory per test process, copied for each server (install takes seconds). */
function templateDatadir(): Promise<string> {
  template ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), 'aw-mariadb-template-'))
    const datadir = join(dir, 'data')
    await run('mariadb-install-db', [
      '--no-defaults',
      `--datadir=${datadir}`,
      '--auth-root-authentication-method=normal',
      '--skip-test-db',
      '--user=root',
    ]).catch((error: { stderr?: string }) => {
      throw new Error(`mariadb-install-db failed: ${error.stderr ?? String(error)}`)
    })
    return datadir
  })()
  return template
}

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve()
    else child.once('exit', () => resolve())
  })

/** Waits until the kernel has stopped the process (state T): SIGSTOP takes effect asynchronously. */
async function stopped(pid: number): Promise<void> {
  const deadline = Date.now() + 5000
  for (;;) {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
    // The state follows the command name, which is in parentheses.
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('T')) return
    if (Date.now() > deadline) throw new Error(`private MariaDB (pid ${pid}) did not stop`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

/** Waits until the server takes connections, or fails with its log's tail. */
async function waitUntilUp(port: number, child: ChildProcess, log: string): Promise<void> {
  const deadline = Date.now() + 30_000
  for (;;) {
    try {
      const connection = await mysql.createConnection({
        host: LOOPBACK,
        port,
        user: 'root',
        connectTimeout: 1000,
      })
      await connection.end()
      return
    } catch (error) {
      if (child.exitCode !== null || Date.now() > deadline) {
        const { stdout } = await run('tail', ['-n', '20', log]).catch(() => ({ stdout: '' }))
        throw new Error(`private MariaDB on ${port} did not start: ${String(error)}\n${stdout}`)
      }
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
}

/**
 * A MariaDB server of its own (mariadbd from the machine's packages) on a spare
 * loopback port, with a database `aw`. stop() and kill() keep its data for
 * restart(); dispose() at the end removes it. `args`: more server options
 * (a startup-only setting a test needs).
 */
export async function startPrivateMariadb(args: string[] = []): Promise<PrivateMariadb> {
  const home = await mkdtemp(join(tmpdir(), 'aw-mariadb-'))
  const datadir = join(home, 'data')
  await cp(await templateDatadir(), datadir, { recursive: true })
  const port = await freePort()
  const log = join(home, 'error.log')
  let child: ChildProcess | undefined
  const start = async () => {
    child = spawn(
      'mariadbd',
      [
        '--no-defaults',
        `--datadir=${datadir}`,
        `--socket=${join(home, 'mysqld.sock')}`,
        `--pid-file=${join(home, 'mysqld.pid')}`,
        `--log-error=${log}`,
        `--port=${port}`,
        `--bind-address=${LOOPBACK}`,
        '--user=root',
        '--skip-name-resolve',
        '--skip-log-bin',
        '--innodb-buffer-pool-size=32M',
        '--max-connections=200',
        ...args,
      ],
      { stdio: 'ignore' },
    )
    await waitUntilUp(port, child, log)
  }
  const end = async (signal: NodeJS.Signals) => {
    if (child === undefined) return
    const ending = exited(child)
    // A frozen server must run again to act on SIGTERM.
    child.kill('SIGCONT')
    child.kill(signal)
    await ending
    child = undefined
  }
  await start()
  const admin = await mysql.createConnection({ host: LOOPBACK, port, user: 'root' })
  await admin.query('CREATE DATABASE IF NOT EXISTS aw')
  await admin.end()
  const url = `mysql://root@${LOOPBACK}:${port}/aw`
  let removed = false
  const cleanup = async () => {
    if (removed) return
    removed = true
    await rm(home, { recursive: true, force: true })
  }
  const killOnExit = () => child?.kill('SIGKILL')
  process.once('exit', killOnExit)
  return {
    port,
    url,
    async stop() {
      await end('SIGTERM')
    },
    async kill() {
      await end('SIGKILL')
    },
    async restart() {
      await end('SIGKILL')
      if (removed) throw new Error('private MariaDB: restart after dispose')
      await start()
    },
    async freeze() {
      if (child?.pid === undefined) return
      child.kill('SIGSTOP')
      await stopped(child.pid)
    },
    async thaw() {
      child?.kill('SIGCONT')
    },
    async dispose() {
      process.off('exit', killOnExit)
      await end('SIGKILL')
      await cleanup()
    },
  }
}

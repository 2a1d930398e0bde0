/**
 * MariaDB for tests: a throwaway database on the machine's server (127.0.0.1:3306,
 * root, no password), or a private server of its own on a spare port for tests
 * that stop, kill and restart it (outages).
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

/** The machine's server; tests only ever talk to loopback. */
export const MYSQL_HOST = '127.0.0.1'
export const MYSQL_PORT = 3306

export interface MysqlTestDatabase {
  /** `mysql://root@127.0.0.1:3306/<database>`, no password. */
  url: string
  database: string
  /** A pool on the database, ended by drop(). */
  pool: Pool
  /** Ends the pool and drops the database. */
  drop(): Promise<void>
}

/**
 * A database with a random name on the machine's server (or the one at `port`).
 * Its pool has `connectionLimit` connections (default 20): every open claim holds one.
 */
export async function createMysqlTestDatabase({
  port = MYSQL_PORT,
  connectionLimit = 20,
}: {
  port?: number
  connectionLimit?: number
} = {}): Promise<MysqlTestDatabase> {
  const database = `aw_test_${randomUUID().replaceAll('-', '').slice(0, 12)}`
  const admin = await mysql.createConnection({ host: MYSQL_HOST, port, user: 'root' })
  try {
    await admin.query(`CREATE DATABASE \`${database}\``)
  } finally {
    await admin.end()
  }
  const url = `mysql://root@${MYSQL_HOST}:${port}/${database}`
  const pool = mysql.createPool({ host: MYSQL_HOST, port, user: 'root', database, connectionLimit })
  return {
    url,
    database,
    pool,
    async drop() {
      await pool.end().catch(() => {})
      const again = await mysql.createConnection({ host: MYSQL_HOST, port, user: 'root' })
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
        host: MYSQL_HOST,
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
 * restart(); dispose() at the end removes it.
 */
export async function startPrivateMariadb(): Promise<PrivateMariadb> {
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
        `--bind-address=${MYSQL_HOST}`,
        '--user=root',
        '--skip-name-resolve',
        '--skip-log-bin',
        '--innodb-buffer-pool-size=32M',
        '--max-connections=200',
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
  const admin = await mysql.createConnection({ host: MYSQL_HOST, port, user: 'root' })
  await admin.query('CREATE DATABASE IF NOT EXISTS aw')
  await admin.end()
  const url = `mysql://root@${MYSQL_HOST}:${port}/aw`
  let removed = false
  const cleanup = async () => {
    if (removed) return
    removed = true
    await rm(home, { recursive: true, force: true })
  }
  process.once('exit', () => child?.kill('SIGKILL'))
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
      await end('SIGKILL')
      await cleanup()
    },
  }
}

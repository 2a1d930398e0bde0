/**
 * The SQL databases the cross-store tests run on, behind one shape: a fresh
 * database with the effect tables the test receivers write (`sql-receiver.mjs`),
 * a way to read them, and receiver processes to start and kill.
 */
import { type ChildProcess, fork } from 'node:child_process'
import { once } from 'node:events'
import { signedDelivery } from '@affiliate-webhooks/core/testing'
import { createMysqlTestDatabase } from '../support/mysql-db.js'
import { createPostgresTestDatabase } from '../support/postgres-db.js'
import { freePort, REDIS_URL } from '../support/redis-servers.js'
import { type PrismaTestProvider, prismaClientPath } from './prisma-clients.js'
import { createSqliteTestFile, openSqlite, type SqliteLibrary } from './sqlite-db.js'

export interface EffectsDatabase {
  /** Connection string of the test database (SQLite: the file's path). */
  url: string
  /** Rows of a read-only query, placeholders as $1 (rewritten for MySQL). */
  rows<T>(sql: string, params?: unknown[]): Promise<T[]>
  drop(): Promise<void>
}

/** A SQL store on one driver: its database, and how a receiver process (`sql-receiver.mjs`) names it. */
export interface SqlKind {
  name: string
  /** STORE of the receiver and worker processes. */
  store: string
  /** More environment of those processes (the SQLite library). */
  env: Record<string, string>
  createDatabase(): Promise<EffectsDatabase>
}

const POSTGRES_TABLES = [
  'CREATE TABLE effects (id bigserial PRIMARY KEY, event_id text NOT NULL, conversion_id bigint NOT NULL, event_order bigint NOT NULL, pid integer NOT NULL)',
  'CREATE TABLE conversion_state (conversion_id bigint PRIMARY KEY, status text NOT NULL, event_order bigint NOT NULL)',
]

export const postgresKind: SqlKind = {
  name: 'postgres',
  store: 'postgres',
  env: {},
  async createDatabase() {
    const db = await createPostgresTestDatabase()
    for (const statement of POSTGRES_TABLES) await db.pool.query(statement)
    return {
      url: db.url,
      async rows<T>(sql: string, params: unknown[] = []) {
        return (await db.pool.query(sql, params)).rows as T[]
      },
      drop: db.drop,
    }
  },
}

export const MYSQL_TABLES = [
  'CREATE TABLE effects (id BIGINT AUTO_INCREMENT PRIMARY KEY, event_id VARCHAR(64) NOT NULL, conversion_id BIGINT NOT NULL, event_order BIGINT NOT NULL, pid INT NOT NULL) ENGINE=InnoDB',
  'CREATE TABLE conversion_state (conversion_id BIGINT PRIMARY KEY, status VARCHAR(64) NOT NULL, event_order BIGINT NOT NULL) ENGINE=InnoDB',
]

export const mysqlKind: SqlKind = {
  name: 'mysql',
  store: 'mysql',
  env: {},
  async createDatabase() {
    // Room for the claims the tests hold open, each on a connection of its own.
    const db = await createMysqlTestDatabase({ connectionLimit: 40 })
    for (const statement of MYSQL_TABLES) await db.pool.query(statement)
    return {
      url: db.url,
      async rows<T>(sql: string, params: unknown[] = []) {
        const [rows] = await db.pool.query(sql.replace(/\$\d+/g, '?'), params)
        return rows as T[]
      },
      drop: db.drop,
    }
  },
}

/** The Postgres store on postgres.js: the same database, the other driver. */
export const postgresJsKind: SqlKind = {
  ...postgresKind,
  name: 'postgres (postgres.js)',
  store: 'postgresjs',
}

/**
 * The Prisma store on one database: the same tables (made with SQL: `prisma
 * migrate` cannot run here), its client generated from test/sql/prisma/ before
 * a process starts.
 */
function prismaKind(on: SqlKind, provider: PrismaTestProvider): SqlKind {
  return {
    ...on,
    name: `${on.name} (Prisma)`,
    store: provider === 'mysql' ? 'prisma-mysql' : 'prisma-postgres',
    async createDatabase() {
      await prismaClientPath(provider)
      return on.createDatabase()
    },
  }
}

export const prismaPostgresKind = prismaKind(postgresKind, 'postgresql')
export const prismaMysqlKind = prismaKind(mysqlKind, 'mysql')

const SQLITE_TABLES = [
  'CREATE TABLE effects (id INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT NOT NULL, conversion_id INTEGER NOT NULL, event_order INTEGER NOT NULL, pid INTEGER NOT NULL)',
  'CREATE TABLE conversion_state (conversion_id INTEGER PRIMARY KEY, status TEXT NOT NULL, event_order INTEGER NOT NULL)',
]

/** The SQLite store on one library: a file of its own, read through a connection of the test's. */
export function sqliteKind(library: SqliteLibrary): SqlKind {
  return {
    name: `sqlite (${library})`,
    store: 'sqlite',
    env: { SQLITE_LIBRARY: library },
    async createDatabase() {
      const file = createSqliteTestFile()
      const db = openSqlite(library, file.file)
      for (const statement of SQLITE_TABLES) db.exec(statement)
      return {
        url: file.file,
        async rows<T>(sql: string, params: unknown[] = []) {
          return db.prepare(sql.replace(/\$\d+/g, '?')).all(...params) as T[]
        },
        async drop() {
          db.close()
          file.drop()
        },
      }
    },
  }
}

/** Every SQL store on every driver, for the tests that run on each. */
export const SQL_KINDS: readonly SqlKind[] = [
  postgresKind,
  postgresJsKind,
  mysqlKind,
  sqliteKind('node:sqlite'),
  sqliteKind('better-sqlite3'),
  prismaPostgresKind,
  prismaMysqlKind,
]

export const SECRET = 'whsec_sql_store_processes'

/** A receiver process of `sql-receiver.mjs`. */
export interface ReceiverProcess {
  child: ChildProcess
  pid: number
  port: number
  url: string
  /** Resolves with the event id once its handler has written the effect (and hangs or dies). */
  effect: Promise<string>
  kill(): Promise<void>
}

export async function startReceiver(
  env: Record<string, string>,
  port?: number,
): Promise<ReceiverProcess> {
  const at = port ?? (await freePort())
  const child = fork(new URL('./sql-receiver.mjs', import.meta.url), {
    env: { ...process.env, REDIS_URL, WEBHOOK_SECRET: SECRET, PORT: String(at), ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const effect = new Promise<string>((resolve) => {
    child.on('message', (message: { effect?: string }) => {
      if (message.effect !== undefined) resolve(message.effect)
    })
  })
  let startup: ReturnType<typeof setTimeout> | undefined
  const [ready] = (await Promise.race([
    once(child, 'message'),
    once(child, 'exit').then(([code]) => {
      throw new Error(`receiver process exited with ${code} before it was ready`)
    }),
    // A receiver that never becomes ready fails the test saying so, not by its timeout.
    new Promise((_, reject) => {
      startup = setTimeout(() => {
        child.kill('SIGKILL')
        reject(new Error(`receiver process (${env.STORE}) not ready within 60 s`))
      }, 60_000)
    }),
  ]).finally(() => clearTimeout(startup))) as [{ pid: number }]
  return {
    child,
    pid: ready.pid,
    port: at,
    url: `http://127.0.0.1:${at}/hooks`,
    effect,
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return
      const exited = once(child, 'exit')
      child.kill('SIGKILL')
      await exited
    },
  }
}

/** The service waits this long for an answer, then counts the attempt failed (the spec). */
const SERVICE_TIMEOUT_MS = 10_000

/** One POST of the event, as the service's attempt `attempt` would send it. Status 0: no answer in time. */
export async function deliver(url: string, event: object, attempt = 1): Promise<number> {
  const signed = await signedDelivery({ secret: SECRET, event, attempt })
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: signed.headers,
      body: signed.body,
      signal: AbortSignal.timeout(SERVICE_TIMEOUT_MS),
    })
    await response.arrayBuffer()
    return response.status
  } catch {
    return 0
  }
}

/** Attempts until a 2xx, as the service retries (quickly here); the statuses seen. */
export async function deliverUntilAcknowledged(
  pick: () => string,
  event: object,
  { pauseMs = 50, maxTries = 400 } = {},
): Promise<number[]> {
  const statuses: number[] = []
  for (let attempt = 1; attempt <= maxTries; attempt++) {
    const status = await deliver(pick(), event, Math.min(attempt, 8))
    statuses.push(status)
    if (status >= 200 && status < 300) return statuses
    await new Promise((resolve) => setTimeout(resolve, pauseMs))
  }
  throw new Error(`no 2xx after ${maxTries} attempts: ${statuses.slice(-5).join(', ')}`)
}

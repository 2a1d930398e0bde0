/**
 * The misuse suite (sql-misuse-cases.ts) on every SQL store and driver: pg,
 * postgres.js, mysql2 on MariaDB, node:sqlite, better-sqlite3, and Prisma on
 * PostgreSQL and on MariaDB. Each driver sends the handler's statements in
 * its own idiom, and ends a transaction under the handler the way its
 * database does: a real deadlock on PostgreSQL and MariaDB, a conflict clause
 * on SQLite.
 */
import { mysqlStore } from '@affiliate-webhooks/mysql'
import { postgresStore } from '@affiliate-webhooks/postgres'
import { type PrismaRawQueries, prismaStore } from '@affiliate-webhooks/prisma'
import { type SqliteDatabase, sqliteStore } from '@affiliate-webhooks/sqlite'
import { PrismaMariaDb } from '@prisma/adapter-mariadb'
import { PrismaPg } from '@prisma/adapter-pg'
import type { Pool as MysqlPool, PoolConnection } from 'mysql2/promise'
import type pg from 'pg'
import postgres from 'postgres'
import { createMysqlTestDatabase, type MysqlTestDatabase } from '../support/mysql-db.js'
import { createPostgresTestDatabase } from '../support/postgres-db.js'
import { type PrismaClientFor, prismaClientPath } from './prisma-clients.js'
import { type MisuseDatabase, type MisuseDriver, sqlMisuseCases } from './sql-misuse-cases.js'
import { createSqliteTestFile, openSqlite, type SqliteLibrary } from './sqlite-db.js'

const toDollars = (sql: string) => {
  let n = 0
  return sql.replace(/\?/g, () => `$${++n}`)
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const rowId = () => Math.floor(Math.random() * 2 ** 31)

/** A text statement of the handler's, sent on ctx.tx. */
type OnTx = (sql: string) => Promise<unknown>

/** What a driver adds to its database's part of a MisuseDatabase. */
type DriverPart = Pick<MisuseDatabase, 'store' | 'query' | 'raw' | 'driverBegin' | 'close'> & {
  onTx(tx: unknown): OnTx
}

/**
 * A real deadlock with the handler's transaction as its victim, on PostgreSQL:
 * the handler holds row a, another session holds b and waits for a, then the
 * handler asks for b. The other session's deadlock_timeout is long, so the
 * handler's detector (1 s) finds the cycle first and its statement fails 40P01.
 */
async function postgresDeadlock(pool: pg.Pool, onTx: OnTx): Promise<void> {
  const [a, b] = [rowId(), rowId()]
  await pool.query('INSERT INTO misuse_hot (id, n) VALUES ($1, 0), ($2, 0)', [a, b])
  await onTx(`UPDATE misuse_hot SET n = n + 1 WHERE id = ${a}`)
  const other = await pool.connect()
  await other.query(
    `BEGIN; SET LOCAL deadlock_timeout = '20s'; UPDATE misuse_hot SET n = n + 1 WHERE id = ${b}`,
  )
  other
    .query(`UPDATE misuse_hot SET n = n + 1 WHERE id = ${a}`)
    .then(() => other.query('ROLLBACK'))
    .catch(() => {})
    .finally(() => other.release())
  await sleep(150)
  await onTx(`UPDATE misuse_hot SET n = n + 1 WHERE id = ${b}`)
}

/**
 * The same on MariaDB, where InnoDB finds the cycle at once and rolls back the
 * transaction that changed fewer rows: the other one writes 200 first.
 */
async function mysqlDeadlock(pool: MysqlPool, onTx: OnTx): Promise<void> {
  const [a, b] = [rowId(), rowId()]
  await pool.query('INSERT INTO misuse_hot (id, n) VALUES (?, 0), (?, 0)', [a, b])
  await onTx(`UPDATE misuse_hot SET n = n + 1 WHERE id = ${a}`)
  const other: PoolConnection = await pool.getConnection()
  await other.query('START TRANSACTION')
  await other.query(`INSERT INTO misuse_heavy (n) VALUES ${Array(200).fill('(1)').join(', ')}`)
  await other.query(`UPDATE misuse_hot SET n = n + 1 WHERE id = ${b}`)
  other
    .query(`UPDATE misuse_hot SET n = n + 1 WHERE id = ${a}`)
    .then(() => other.query('ROLLBACK'))
    .catch(() => {})
    .finally(() => other.release())
  await sleep(150)
  await onTx(`UPDATE misuse_hot SET n = n + 1 WHERE id = ${b}`)
}

const POSTGRES_LEDGER = (table: string) =>
  `CREATE TABLE ${table} (id bigserial PRIMARY KEY, event_id text NOT NULL, attempt int NOT NULL, step text NOT NULL)`
const MYSQL_LEDGER = (table: string) =>
  `CREATE TABLE ${table} (id BIGINT AUTO_INCREMENT PRIMARY KEY, event_id VARCHAR(64) NOT NULL, attempt INT NOT NULL, step VARCHAR(16) NOT NULL) ENGINE=InnoDB`

/** PostgreSQL's test database, with the deadlock's table, on a driver given by `on`. */
async function onPostgres(
  on: (url: string, pool: pg.Pool) => Promise<DriverPart>,
): Promise<MisuseDatabase> {
  const db = await createPostgresTestDatabase()
  await db.pool.query('CREATE TABLE misuse_hot (id bigint PRIMARY KEY, n int NOT NULL)')
  const driver = await on(db.url, db.pool)
  return {
    ...driver,
    exec: async (sql, params = []) => {
      await db.pool.query(toDollars(sql), params)
    },
    rows: async <T>(sql: string, params: unknown[] = []) =>
      (await db.pool.query(toDollars(sql), params)).rows as T[],
    ledgerDdl: POSTGRES_LEDGER,
    ddlCommits: false,
    // PostgreSQL comments nest: the COMMIT is inside the comment.
    notRefused: ['SELECT 1 /* a /* nested */ comment; COMMIT */'],
    endsTransaction: {
      title: 'a deadlock (40P01) caught',
      run: (tx) => postgresDeadlock(db.pool, driver.onTx(tx)),
    },
    close: async () => {
      await driver.close()
      await db.drop()
    },
  }
}

/** MariaDB's test database, with the deadlock's tables, on a driver given by `on`. */
async function onMariadb(
  on: (db: MysqlTestDatabase) => Promise<DriverPart>,
): Promise<MisuseDatabase> {
  const db = await createMysqlTestDatabase({ connectionLimit: 40 })
  await db.pool.query(
    'CREATE TABLE misuse_hot (id BIGINT PRIMARY KEY, n INT NOT NULL) ENGINE=InnoDB',
  )
  await db.pool.query(
    'CREATE TABLE misuse_heavy (id BIGINT AUTO_INCREMENT PRIMARY KEY, n INT) ENGINE=InnoDB',
  )
  const driver = await on(db)
  return {
    ...driver,
    exec: async (sql, params = []) => {
      await db.pool.query(sql, params)
    },
    rows: async <T>(sql: string, params: unknown[] = []) =>
      (await db.pool.query(sql, params))[0] as T[],
    ledgerDdl: MYSQL_LEDGER,
    ddlCommits: true,
    // A user variable (one @) named autocommit: setting it commits nothing.
    notRefused: ['SET @autocommit = 1', 'SET @`autocommit` = 0'],
    endsTransaction: {
      title: 'a deadlock (1213) caught',
      run: (tx) => mysqlDeadlock(db.pool, driver.onTx(tx)),
    },
    close: async () => {
      await driver.close()
      await db.drop()
    },
  }
}

const pgDriver: MisuseDriver = {
  name: 'postgresStore (pg)',
  open: () =>
    onPostgres(async (_url, pool) => {
      const query = (tx: unknown, sql: string, params: unknown[] = []) =>
        (tx as pg.PoolClient).query(toDollars(sql), params)
      return {
        store: (options) => postgresStore({ pool, ...options }),
        query,
        raw: (tx, sql) => (tx as pg.PoolClient).query(sql),
        onTx: (tx) => (sql) => query(tx, sql),
        close: async () => {},
      }
    }),
}

const postgresJsDriver: MisuseDriver = {
  name: 'postgresStore (postgres.js)',
  open: () =>
    onPostgres(async (url) => {
      const sql = postgres(url, { max: 10, onnotice: () => {} })
      const query = (tx: unknown, text: string, params: unknown[] = []) =>
        (tx as postgres.TransactionSql).unsafe(toDollars(text), params as never[])
      return {
        store: (options) => postgresStore({ sql, ...options }),
        query,
        raw: (tx, text) => (tx as postgres.TransactionSql).unsafe(text),
        onTx: (tx) => (text) => query(tx, text),
        close: () => sql.end({ timeout: 1 }),
      }
    }),
}

const mysqlDriver: MisuseDriver = {
  name: 'mysqlStore (mysql2 on MariaDB)',
  open: () =>
    onMariadb(async (db) => {
      const query = (tx: unknown, sql: string, params: unknown[] = []) =>
        (tx as PoolConnection).query(sql, params)
      return {
        store: (options) => mysqlStore({ pool: db.pool, logger: false, ...options }),
        query,
        raw: (tx, sql) => (tx as PoolConnection).query(sql),
        driverBegin: (tx) => (tx as PoolConnection).beginTransaction(),
        onTx: (tx) => (sql) => query(tx, sql),
        close: async () => {},
      }
    }),
}

type PrismaClient = PrismaClientFor<PrismaRawQueries>

const prismaPostgresDriver: MisuseDriver = {
  name: 'prismaStore (PostgreSQL)',
  open: async () => {
    const { PrismaClient } = await import(await prismaClientPath('postgresql'))
    return onPostgres(async (url) => {
      const prisma: PrismaClient = new PrismaClient({
        adapter: new PrismaPg({ connectionString: url, max: 10 }),
      })
      const query = (tx: unknown, sql: string, params: unknown[] = []) =>
        (tx as PrismaRawQueries).$executeRawUnsafe(toDollars(sql), ...params)
      return {
        store: (options) => prismaStore({ prisma, logger: false, ...options }),
        query,
        raw: (tx, sql) => (tx as PrismaRawQueries).$executeRawUnsafe(sql),
        onTx: (tx) => (sql) => query(tx, sql),
        close: () => prisma.$disconnect(),
      }
    })
  },
}

const prismaMariadbDriver: MisuseDriver = {
  name: 'prismaStore (MariaDB)',
  open: async () => {
    const { PrismaClient } = await import(await prismaClientPath('mysql'))
    return onMariadb(async (db) => {
      const url = new URL(db.url)
      const prisma: PrismaClient = new PrismaClient({
        adapter: new PrismaMariaDb({
          host: url.hostname,
          port: Number(url.port),
          user: decodeURIComponent(url.username),
          database: db.database,
          connectionLimit: 20,
        }),
      })
      const query = (tx: unknown, sql: string, params: unknown[] = []) =>
        (tx as PrismaRawQueries).$executeRawUnsafe(sql, ...params)
      return {
        store: (options) => prismaStore({ prisma, logger: false, ...options }),
        query,
        raw: (tx, sql) => (tx as PrismaRawQueries).$executeRawUnsafe(sql),
        onTx: (tx) => (sql) => query(tx, sql),
        close: () => prisma.$disconnect(),
      }
    })
  },
}

/** SQLite on one library: the store's connection, and the test's own for reading. */
function sqliteDriver(library: SqliteLibrary): MisuseDriver {
  return {
    name: `sqliteStore (${library})`,
    async open() {
      const file = createSqliteTestFile()
      const database = openSqlite(library, file.file)
      const reader = openSqlite(library, file.file)
      reader.exec('CREATE TABLE misuse_unique (k TEXT PRIMARY KEY)')
      reader.exec("INSERT INTO misuse_unique VALUES ('taken')")
      const query = async (tx: unknown, sql: string, params: unknown[] = []) =>
        (tx as SqliteDatabase).prepare(sql).run(...params)
      return {
        store: (options) => sqliteStore({ database, ...options }),
        query,
        raw: async (tx, sql) => (tx as SqliteDatabase).exec(sql),
        exec: async (sql, params = []) => {
          reader.prepare(sql).run(...params)
        },
        rows: async <T>(sql: string, params: unknown[] = []) =>
          reader.prepare(sql).all(...params) as T[],
        ledgerDdl: (table) =>
          `CREATE TABLE ${table} (id INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT NOT NULL, attempt INTEGER NOT NULL, step TEXT NOT NULL)`,
        ddlCommits: false,
        notRefused: ["SELECT 'COMMIT' AS begin"],
        endsTransaction: {
          title: 'INSERT OR ROLLBACK meeting a conflict, caught',
          run: async (tx) => {
            await query(tx, "INSERT OR ROLLBACK INTO misuse_unique VALUES ('taken')")
          },
        },
        close: async () => {
          database.close()
          reader.close()
          file.drop()
        },
      }
    },
  }
}

for (const driver of [
  pgDriver,
  postgresJsDriver,
  mysqlDriver,
  sqliteDriver('node:sqlite'),
  sqliteDriver('better-sqlite3'),
  prismaPostgresDriver,
  prismaMariadbDriver,
]) {
  sqlMisuseCases(driver)
}

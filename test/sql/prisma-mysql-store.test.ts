/**
 * The Prisma store on MariaDB (`prismaStore({ prisma })`, @prisma/adapter-mariadb):
 * the shared store contract, the one-row-per-conversion cases and the receiver
 * cases, as with mysql2, with ctx.tx the interactive transaction's client. The
 * client is generated from test/sql/prisma/mysql.prisma at test time.
 */
import { type PrismaRawQueries, prismaStore } from '@affiliate-webhooks/prisma'
import { PrismaMariaDb } from '@prisma/adapter-mariadb'
import { afterAll, beforeAll } from 'vitest'
import { storeContract } from '../stores/store-contract.js'
import { createMysqlTestDatabase, type MysqlTestDatabase } from '../support/mysql-db.js'
import { type PrismaClientFor, prismaClientPath } from './prisma-clients.js'
import { sqlReceiverCases } from './sql-receiver-cases.js'
import { sqlStoreCases } from './sql-store-cases.js'

// The generated client exists only once a test generated it: typed here by what the tests call.
type Tx = PrismaRawQueries
type Client = PrismaClientFor<Tx>

let db: MysqlTestDatabase
let prisma: Client
beforeAll(async () => {
  const { PrismaClient } = await import(await prismaClientPath('mysql'))
  db = await createMysqlTestDatabase()
  const url = new URL(db.url)
  // Room for the claims the cases hold open, each on a connection of its own.
  const adapter = new PrismaMariaDb({
    host: url.hostname,
    port: Number(url.port),
    user: decodeURIComponent(url.username),
    database: db.database,
    connectionLimit: 40,
  })
  prisma = new PrismaClient({ adapter })
})
afterAll(async () => {
  await prisma?.$disconnect()
  await db?.drop()
})

const tablePrefix = (prefix: string | undefined) =>
  prefix === undefined ? undefined : `${prefix.toLowerCase().replace(/[^a-z0-9_]/g, '_')}`

storeContract('prismaStore (MariaDB)', ({ prefix, ...timings }) =>
  prismaStore({ prisma, tablePrefix: tablePrefix(prefix), logger: false, ...timings }),
)

sqlStoreCases('prismaStore (MariaDB)', async (options) =>
  prismaStore({ prisma, logger: false, ...options }),
)

sqlReceiverCases<Tx>('prismaStore (MariaDB)', {
  store: (options) => prismaStore({ prisma, logger: false, ...options }),
  query: (tx, text, params = []) => tx.$executeRawUnsafe(text, ...params),
  exec: async (text, params) => {
    await db.pool.query(text, params)
  },
  count: async (text, params) => {
    const [rows] = await db.pool.query(text, params)
    return Number((rows as { n: number }[])[0]?.n)
  },
  ledgerDdl: (table) =>
    `CREATE TABLE ${table} (event_id VARCHAR(255) PRIMARY KEY, conversion_id BIGINT, commission DECIMAL(12,2)) ENGINE=InnoDB`,
  insertSql: (table) => `INSERT INTO ${table} VALUES (?, ?, ?)`,
  spoil: {
    // A ROLLBACK is refused on ctx.tx; dropping the store's savepoint is a way
    // the guard does not see, and the commit's check answers it.
    title: "dropped the store's savepoint (RELEASE SAVEPOINT), which the guard does not see",
    run: async (tx) => {
      await tx.$executeRawUnsafe('RELEASE SAVEPOINT `aw_claim`')
    },
    // The handler's doing: answered as if it had thrown.
    status: 500,
    code: 'handler_failed',
  },
})

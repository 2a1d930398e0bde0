// One receiver process of the SQL store tests (crash and chaos): the node adapter
// with the store named by STORE (postgres, postgresjs, mysql, sqlite with
// SQLITE_LIBRARY, prisma-postgres, prisma-mysql, or redis for the documented difference). The handler's effect is a row in the test database's `effects`
// table and the conversion's newest status in `conversion_state`: written through
// ctx.tx with a SQL store, and straight to the database (committed at once) with
// Redis, whose mark lives elsewhere. Told by the test, the process hangs or dies
// by SIGKILL right after the next effect, before the store's commit.
import { once } from 'node:events'
import { createServer } from 'node:http'
import { affiliateWebhook } from '@affiliate-webhooks/node'

const {
  STORE,
  DATABASE_URL,
  REDIS_URL,
  KEY_PREFIX,
  WEBHOOK_SECRET,
  PORT,
  LEASE_MS,
  SQLITE_LIBRARY,
} = process.env
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
// 'hang', 'crash' or 'throw', for the next effect; set by a message from the test.
let next = process.env.AFTER_FIRST_EFFECT
process.on('message', (message) => {
  next = message
})

const mysqlDialect = {
  insertEffect:
    'INSERT INTO effects (event_id, conversion_id, event_order, pid) VALUES (?, ?, ?, ?)',
  upsertState:
    'INSERT INTO conversion_state (conversion_id, status, event_order) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE status = VALUES(status), event_order = VALUES(event_order)',
}
const postgresDialect = {
  insertEffect:
    'INSERT INTO effects (event_id, conversion_id, event_order, pid) VALUES ($1, $2, $3, $4)',
  upsertState:
    'INSERT INTO conversion_state (conversion_id, status, event_order) VALUES ($1, $2, $3) ON CONFLICT (conversion_id) DO UPDATE SET status = EXCLUDED.status, event_order = EXCLUDED.event_order',
}

// Each driver's own idiom for one statement with parameters.
const byQuery = (db, sql, params) => db.query(sql, params)

async function setUpSqlite() {
  const { sqliteStore } = await import('@affiliate-webhooks/sqlite')
  let database
  if (SQLITE_LIBRARY === 'better-sqlite3') {
    const { default: Database } = await import('better-sqlite3')
    database = new Database(DATABASE_URL)
  } else {
    const { DatabaseSync } = await import('node:sqlite')
    database = new DatabaseSync(DATABASE_URL)
  }
  database.exec('PRAGMA journal_mode = WAL')
  return {
    store: sqliteStore({ database }),
    direct: database,
    dialect: mysqlDialect,
    sqliteUpsert: true,
    run: (db, sql, params) => db.prepare(sql).run(...params),
  }
}

/** Prisma: the effect and the state through the generated models of ctx.tx. */
async function setUpPrisma() {
  const { prismaSetUp } = await import('./prisma-process.mjs')
  const { prisma, store } = await prismaSetUp(STORE, DATABASE_URL, 20)
  return {
    store,
    direct: prisma,
    write: async (db, eventId, conversionId, status, order) => {
      await db.effect.create({
        data: {
          eventId,
          conversionId: BigInt(conversionId),
          eventOrder: BigInt(order),
          pid: process.pid,
        },
      })
      const state = { status, eventOrder: BigInt(order) }
      await db.conversionState.upsert({
        where: { conversionId: BigInt(conversionId) },
        create: { conversionId: BigInt(conversionId), ...state },
        update: state,
      })
    },
  }
}

async function setUp() {
  if (STORE === 'sqlite') return setUpSqlite()
  if (STORE?.startsWith('prisma-')) return setUpPrisma()
  if (STORE === 'mysql') {
    const mysql = await import('mysql2/promise')
    const { mysqlStore } = await import('@affiliate-webhooks/mysql')
    const pool = mysql.createPool({ uri: DATABASE_URL, connectionLimit: 20 })
    return { store: mysqlStore({ pool }), direct: pool, dialect: mysqlDialect, run: byQuery }
  }
  if (STORE === 'postgresjs') {
    const { default: postgres } = await import('postgres')
    const { postgresStore } = await import('@affiliate-webhooks/postgres')
    const sql = postgres(DATABASE_URL, { max: 20, onnotice: () => {} })
    return {
      store: postgresStore({ sql }),
      direct: sql,
      dialect: postgresDialect,
      run: (db, text, params) => db.unsafe(text, params),
    }
  }
  const { default: pg } = await import('pg')
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 20 })
  pool.on('error', () => {})
  if (STORE === 'postgres') {
    const { postgresStore } = await import('@affiliate-webhooks/postgres')
    return { store: postgresStore({ pool }), direct: pool, dialect: postgresDialect, run: byQuery }
  }
  const { Redis } = await import('ioredis')
  const { recommendedRedisOptions, redisStore } = await import('@affiliate-webhooks/redis')
  const client = new Redis(REDIS_URL, { ...recommendedRedisOptions })
  await once(client, 'ready')
  return {
    store: redisStore({ client, prefix: KEY_PREFIX }),
    direct: pool,
    dialect: postgresDialect,
    run: byQuery,
  }
}

const { store, direct, dialect: chosen, run, sqliteUpsert, write } = await setUp()
// SQLite takes MySQL's placeholders and Postgres's upsert.
const dialect = sqliteUpsert
  ? {
      ...chosen,
      upsertState:
        'INSERT INTO conversion_state (conversion_id, status, event_order) VALUES (?, ?, ?) ON CONFLICT (conversion_id) DO UPDATE SET status = excluded.status, event_order = excluded.event_order',
    }
  : chosen
await store.ready?.()

const webhook = affiliateWebhook({
  path: '/hooks',
  secret: WEBHOOK_SECRET,
  store,
  leaseMs: Number(LEASE_MS ?? 30_000),
  logger: false,
  async onConversion(conversion, event, ctx) {
    // With a SQL store the effect joins the store's transaction; with Redis it commits now.
    const db = ctx.tx ?? direct
    const order = Date.parse(event.createdAt)
    if (write !== undefined) {
      await write(db, event.id, conversion.id, conversion.status, order)
    } else {
      await run(db, dialect.insertEffect, [event.id, conversion.id, order, process.pid])
      await run(db, dialect.upsertState, [conversion.id, conversion.status, order])
    }
    if (next !== undefined) {
      const what = next
      next = undefined
      // The message is written asynchronously: a SIGKILL straight after send() can
      // lose it, and the test would wait for it forever. Kill once it has left.
      await new Promise((resolve) => process.send?.({ effect: event.id }, resolve))
      if (what === 'crash') process.kill(process.pid, 'SIGKILL')
      if (what === 'hang') await new Promise(() => {})
      if (what === 'throw') throw new Error('downstream failed after the effect')
    }
    // Work after the effect and before the commit: where a kill hurts.
    await pause(Math.random() * 6)
  },
})

const server = createServer(webhook)
server.listen(Number(PORT), '127.0.0.1', () => process.send?.({ ready: true, pid: process.pid }))

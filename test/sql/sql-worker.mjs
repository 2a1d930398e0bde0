// A BullMQ worker process with the SQL store named by STORE (postgres,
// postgresjs, mysql, sqlite with SQLITE_LIBRARY, prisma-postgres or prisma-mysql): the handler writes its
// effect through ctx.tx in that driver's idiom. Told by AFTER_FIRST_EFFECT=hang,
// it hangs right after its first effect (before the commit) and says so, for
// the test to SIGKILL it there.
import { createWorker } from '@affiliate-webhooks/bullmq'

const { REDIS_URL, DATABASE_URL, QUEUE, PREFIX, AFTER_FIRST_EFFECT, STORE, SQLITE_LIBRARY } =
  process.env
const { hostname, port } = new URL(REDIS_URL)
let hang = AFTER_FIRST_EFFECT === 'hang'

/** The store, and one INSERT of the effect through ctx.tx: (tx, eventId, conversionId, pid). */
async function setUp() {
  if (STORE?.startsWith('prisma-')) {
    const { prismaSetUp } = await import('./prisma-process.mjs')
    const { store } = await prismaSetUp(STORE, DATABASE_URL, 8)
    return {
      store,
      insert: (tx, eventId, conversionId, pid) =>
        tx.effect.create({
          data: { eventId, conversionId: BigInt(conversionId), eventOrder: 0n, pid },
        }),
    }
  }
  if (STORE === 'sqlite') {
    const { sqliteStore } = await import('@affiliate-webhooks/sqlite')
    const database =
      SQLITE_LIBRARY === 'better-sqlite3'
        ? new (await import('better-sqlite3')).default(DATABASE_URL)
        : new (await import('node:sqlite')).DatabaseSync(DATABASE_URL)
    database.exec('PRAGMA journal_mode = WAL')
    return {
      store: sqliteStore({ database }),
      insert: (tx, ...values) =>
        tx
          .prepare(
            'INSERT INTO effects (event_id, conversion_id, event_order, pid) VALUES (?, ?, 0, ?)',
          )
          .run(...values),
    }
  }
  if (STORE === 'mysql') {
    const mysql = await import('mysql2/promise')
    const { mysqlStore } = await import('@affiliate-webhooks/mysql')
    const pool = mysql.createPool({ uri: DATABASE_URL, connectionLimit: 8 })
    return {
      store: mysqlStore({ pool }),
      insert: (tx, ...values) =>
        tx.query(
          'INSERT INTO effects (event_id, conversion_id, event_order, pid) VALUES (?, ?, 0, ?)',
          values,
        ),
    }
  }
  const { postgresStore } = await import('@affiliate-webhooks/postgres')
  if (STORE === 'postgresjs') {
    const { default: postgres } = await import('postgres')
    const sql = postgres(DATABASE_URL, { max: 8, onnotice: () => {} })
    return {
      store: postgresStore({ sql }),
      insert: (tx, eventId, conversionId, pid) =>
        tx`INSERT INTO effects (event_id, conversion_id, event_order, pid) VALUES (${eventId}, ${conversionId}, 0, ${pid})`,
    }
  }
  const { default: pg } = await import('pg')
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 8 })
  pool.on('error', () => {})
  return {
    store: postgresStore({ pool }),
    insert: (tx, ...values) =>
      tx.query(
        'INSERT INTO effects (event_id, conversion_id, event_order, pid) VALUES ($1, $2, 0, $3)',
        values,
      ),
  }
}

const { store, insert } = await setUp()
const { worker } = createWorker({
  connection: { host: hostname, port: Number(port || 6379) },
  queueName: QUEUE,
  prefix: PREFIX,
  store,
  concurrency: 4,
  lockDuration: 1000,
  stalledInterval: 500,
  async onConversion(conversion, event, ctx) {
    await insert(ctx.tx, event.id, conversion.id, process.pid)
    if (hang) {
      hang = false
      process.send?.({ effect: event.id })
      await new Promise(() => {})
    }
  },
})
worker.on('error', () => {})
await worker.waitUntilReady()
process.send?.({ ready: true, pid: process.pid })

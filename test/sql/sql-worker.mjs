// A BullMQ worker process with the Postgres store: the handler writes its effect
// through ctx.tx. Told by AFTER_FIRST_EFFECT=hang, it hangs right after its first
// effect (before the commit) and says so, for the test to SIGKILL it there.
import { createWorker } from '@affiliate-webhooks/bullmq'
import { postgresStore } from '@affiliate-webhooks/postgres'
import pg from 'pg'

const { REDIS_URL, DATABASE_URL, QUEUE, PREFIX, AFTER_FIRST_EFFECT } = process.env
const { hostname, port } = new URL(REDIS_URL)
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 8 })
pool.on('error', () => {})
let hang = AFTER_FIRST_EFFECT === 'hang'

const { worker } = createWorker({
  connection: { host: hostname, port: Number(port || 6379) },
  queueName: QUEUE,
  prefix: PREFIX,
  store: postgresStore({ pool }),
  concurrency: 4,
  lockDuration: 1000,
  stalledInterval: 500,
  async onConversion(conversion, event, ctx) {
    await ctx.tx.query(
      'INSERT INTO effects (event_id, conversion_id, event_order, pid) VALUES ($1, $2, 0, $3)',
      [event.id, conversion.id, process.pid],
    )
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

// The worker process: runs the slow handler for every queued event. Start as many
// as you like, here or on other machines, with the same Redis and queue name.
import { createWorker } from '@affiliate-webhooks/bullmq'
import { connection, QUEUE_NAME, store } from './config.js'

const slowMs = Number(process.env.SLOW_MS ?? 15_000)

const { worker, close } = createWorker({
  connection,
  queueName: QUEUE_NAME,
  store: store(),
  concurrency: 8,
  async onConversion(conversion, event, ctx) {
    console.log(`${event.id} conversion ${conversion.id} ${conversion.status}: working...`)
    // Stands for the slow part: a CRM call, a ledger write, an email.
    await new Promise((resolve) => setTimeout(resolve, slowMs))
    console.log(`${event.id} done (try ${ctx.attemptsMade + 1})`)
  },
})
worker.on('failed', (job, error) => console.error(`${job?.id} failed: ${error.message}`))

process.on('SIGTERM', () => void close())
process.on('SIGINT', () => void close())
console.log(`worker on queue ${QUEUE_NAME}`)

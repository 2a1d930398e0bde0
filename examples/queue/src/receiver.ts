// The receiver process: verifies, records, enqueues, answers 200 "queued" at once.
import { createServer } from 'node:http'
import { bullmqHandoff } from '@affiliate-webhooks/bullmq'
import { affiliateWebhook } from '@affiliate-webhooks/node'
import { connection, QUEUE_NAME, store } from './config.js'

const secret = process.env.AFFILIATE_WEBHOOK_SECRET ?? 'whsec_example_queue_secret'
const port = Number(process.env.PORT ?? 3000)

const webhook = affiliateWebhook({
  path: '/hooks',
  secret,
  store: store(),
  queue: bullmqHandoff({ connection, queueName: QUEUE_NAME }),
})

createServer(webhook).listen(port, '127.0.0.1', () => {
  console.log(`receiver on http://127.0.0.1:${port}/hooks, queue ${QUEUE_NAME}`)
})

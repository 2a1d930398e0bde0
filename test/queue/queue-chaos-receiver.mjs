// One receiver process of the queued chaos test: the node adapter handing every
// verified event to BullMQ, with the Redis store for the receiver-side dedupe.
import { createServer } from 'node:http'
import { bullmqHandoff } from '@affiliate-webhooks/bullmq'
import { affiliateWebhook } from '@affiliate-webhooks/node'
import { recommendedRedisOptions, redisStore } from '@affiliate-webhooks/redis'
import { Redis } from 'ioredis'

const { REDIS_URL, WEBHOOK_SECRET, KEY_PREFIX, QUEUE, PORT } = process.env
const { hostname, port } = new URL(REDIS_URL)
const client = new Redis(REDIS_URL, { ...recommendedRedisOptions })
client.on('error', () => {})
const webhook = affiliateWebhook({
  path: '/hooks',
  secret: WEBHOOK_SECRET,
  store: redisStore({ client, prefix: KEY_PREFIX }),
  queue: bullmqHandoff({
    connection: { host: hostname, port: Number(port) },
    queueName: QUEUE,
    attempts: 20,
    backoff: { type: 'fixed', delay: 100 },
  }),
})
createServer(webhook).listen(Number(PORT), '127.0.0.1', () =>
  process.send?.({ ready: true, pid: process.pid }),
)

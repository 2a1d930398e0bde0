// One receiver process of the failover runs: the node adapter with the Redis
// store reaching its primary through Sentinel. Every handler effect is written,
// with the time it was applied, to another Redis (the publisher's own database,
// which does not fail over), so the run can tell which events were applied
// twice and in what order.
import { createServer } from 'node:http'
import { affiliateWebhook } from '@affiliate-webhooks/node'
import { recommendedRedisOptions, redisStore } from '@affiliate-webhooks/redis'
import { Redis } from 'ioredis'

const { EFFECTS_URL, EFFECTS_PREFIX, WEBHOOK_SECRET, SENTINELS, MASTER_NAME, REPLICATION } =
  process.env
const effects = new Redis(EFFECTS_URL)
const client = new Redis({
  ...recommendedRedisOptions,
  sentinels: JSON.parse(SENTINELS),
  name: MASTER_NAME,
  // Find the new primary quickly once Sentinel names it.
  retryStrategy: () => 50,
  sentinelRetryStrategy: () => 100,
})
client.on('error', () => {})
const replication = REPLICATION ? JSON.parse(REPLICATION) : undefined

const server = createServer(
  affiliateWebhook({
    secret: WEBHOOK_SECRET,
    store: redisStore({ client, prefix: 'awf:', logger: false, replication }),
    logger: false,
    async onConversion(conversion, event) {
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 2))
      await effects
        .multi()
        .rpush(`${EFFECTS_PREFIX}effects`, `${event.id}|${Date.now()}`)
        .hset(`${EFFECTS_PREFIX}state`, conversion.id, `${event.createdAt}|${conversion.status}`)
        .exec()
    },
  }),
)
server.listen(0, '127.0.0.1', () => process.send?.({ port: server.address().port }))
process.on('SIGTERM', () => {
  server.close()
  client.disconnect()
  effects.disconnect()
  process.exit(0)
})

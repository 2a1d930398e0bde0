// One receiver process of the multi-process chaos test: the node adapter with the
// Redis store, on a fixed port so a restart comes back where the load balancer
// expects it. Every handler effect and every 200 it wrote out are logged in Redis
// with this process's pid, so the test can tell which effects a SIGKILL may have
// left without their commit.
import { once } from 'node:events'
import { createServer } from 'node:http'
import { affiliateWebhook } from '@affiliate-webhooks/node'
import { recommendedRedisOptions, redisStore } from '@affiliate-webhooks/redis'
import { Redis } from 'ioredis'

const { REDIS_URL, WEBHOOK_SECRET, KEY_PREFIX, PORT, LEASE_MS, FAIL_FIRST_RATE } = process.env
const client = new Redis(REDIS_URL, { ...recommendedRedisOptions })
await once(client, 'ready')
const failRate = Number(FAIL_FIRST_RATE)
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
// Told by the test: die (SIGKILL, no cleanup) right after the next effect, before
// its commit, which is the one place where a crash can make a handler run twice.
let crashAfterNextEffect = false
process.on('message', (message) => {
  if (message === 'crash-after-next-effect') crashAfterNextEffect = true
})

const webhook = affiliateWebhook({
  path: '/hooks',
  secret: WEBHOOK_SECRET,
  store: redisStore({ client, prefix: KEY_PREFIX }),
  leaseMs: Number(LEASE_MS),
  async onConversion(conversion, event) {
    // Fails at random the first time any process sees the event, as a flaky downstream would.
    const first = await client.set(`${KEY_PREFIX}first:${event.id}`, '1', 'NX')
    if (first === 'OK' && Math.random() < failRate) throw new Error('flaky downstream')
    await pause(Math.random() * 8)
    // The effect: the publisher's table row and a log of who applied what.
    await client
      .multi()
      .rpush(`${KEY_PREFIX}effects`, `${event.id}|${process.pid}`)
      .hset(`${KEY_PREFIX}state`, conversion.id, `${event.createdAt}|${conversion.status}`)
      .exec()
    if (crashAfterNextEffect) process.kill(process.pid, 'SIGKILL')
    // Work after the effect and before the commit: a kill here leaves an effect uncommitted.
    await pause(Math.random() * 4)
  },
})

const server = createServer((req, res) => {
  const eventId = req.headers['service-event-id']
  res.on('finish', () => {
    // Written after the answer left, so an event with this record was committed by this pid.
    if (res.statusCode === 200 && typeof eventId === 'string') {
      client.rpush(`${KEY_PREFIX}acks`, `${eventId}|${process.pid}`).catch(() => {})
    }
  })
  webhook(req, res)
})
server.listen(Number(PORT), '127.0.0.1', () => process.send?.({ ready: true, pid: process.pid }))

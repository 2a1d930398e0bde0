// One worker process of the queued chaos test. Each handler run logs its effect
// (event id, pid and a run id) and the conversion's row in Redis; a run that
// committed is logged again, by run id, on the 'completed' event, so the test can
// tell which runs ended without their commit (a SIGKILL, or a commit that failed
// while Redis was down).
import { createWorker } from '@affiliate-webhooks/bullmq'
import { recommendedRedisOptions, redisStore } from '@affiliate-webhooks/redis'
import { Redis } from 'ioredis'

const { REDIS_URL, KEY_PREFIX, QUEUE, FAIL_FIRST_RATE, WORKER_TIMINGS } = process.env
const { hostname, port } = new URL(REDIS_URL)
const effects = new Redis(REDIS_URL, { maxRetriesPerRequest: null })
const storeClient = new Redis(REDIS_URL, { ...recommendedRedisOptions })
for (const c of [effects, storeClient]) c.on('error', () => {})
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
// Told by the test where to die by SIGKILL: right after the next effect (before
// its commit), or in the middle of the next handler (before its effect).
let crash
process.on('message', (message) => {
  crash = message
})
const die = () => process.kill(process.pid, 'SIGKILL')
// Before a kill: which event this worker dies running, and when.
const dying = (eventId) =>
  effects.rpush(`${KEY_PREFIX}deaths`, `${eventId}|${process.pid}|${Date.now()}`)
// The run of each job in flight here; one process runs a job once at a time.
const runs = new Map()
let runCounter = 0

const { worker } = createWorker({
  connection: { host: hostname, port: Number(port) },
  queueName: QUEUE,
  store: redisStore({ client: storeClient, prefix: KEY_PREFIX }),
  concurrency: 8,
  maxStalledCount: 20,
  // lockDuration, stalledInterval, deferMs and a leaseMs far longer than any of them.
  ...JSON.parse(WORKER_TIMINGS),
  async onConversion(conversion, event) {
    const run = `${process.pid}.${++runCounter}`
    runs.set(event.id, run)
    await effects.rpush(`${KEY_PREFIX}starts`, `${event.id}|${process.pid}|${Date.now()}`)
    if (crash === 'mid-handler') {
      await dying(event.id)
      die()
    }
    // Fails the first time any process sees the event, as a flaky downstream would.
    const first = await effects.set(`${KEY_PREFIX}first:${event.id}`, '1', 'NX')
    if (first === 'OK' && Math.random() < Number(FAIL_FIRST_RATE))
      throw new Error('flaky downstream')
    await pause(Math.random() * 4)
    await effects
      .multi()
      .rpush(`${KEY_PREFIX}effects`, `${event.id}|${process.pid}|${run}`)
      .hset(`${KEY_PREFIX}state`, conversion.id, `${event.createdAt}|${conversion.status}`)
      .exec()
    if (crash === 'after-effect') {
      await dying(event.id)
      die()
    }
    await pause(Math.random() * 2)
  },
})
worker.on('completed', (job, outcome) => {
  if (outcome === 'processed') effects.rpush(`${KEY_PREFIX}commits`, runs.get(job.id))
  runs.delete(job.id)
})
worker.on('failed', (job) => {
  if (job) runs.delete(job.id)
})
await worker.waitUntilReady()
process.send?.({ ready: true, pid: process.pid })

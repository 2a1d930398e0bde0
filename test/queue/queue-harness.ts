/**
 * The queued mode of the receiver for cross-package tests: a `bullmqHandoff` on
 * the machine's Redis and a worker in this process, each case on its own queue
 * name and store prefix, removed afterwards.
 */
import { randomUUID } from 'node:crypto'
import {
  type BullmqHandoffOptions,
  bullmqHandoff,
  type CreateWorkerOptions,
  createWorker,
} from '@affiliate-webhooks/bullmq'
import type { EventStore, ReceiverOptions } from '@affiliate-webhooks/core'
import { redisStore } from '@affiliate-webhooks/redis'
import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import type { Mode } from '../support/conformance-cases.js'
import { REDIS_URL } from '../support/redis-servers.js'

const BUSY = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children'] as const

/** Resolves once the queue holds no job that is still to run. */
export async function drained(queue: Queue, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const counts = await queue.getJobCounts(...BUSY)
    if (BUSY.every((state) => (counts[state] ?? 0) === 0)) return
    if (Date.now() > deadline) throw new Error(`queue not drained: ${JSON.stringify(counts)}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

export interface QueueSetup {
  queueName: string
  prefix: string
  redis: Redis
  store: ReturnType<typeof redisStore>
  handoff: ReturnType<typeof bullmqHandoff>
  /** A queue handle for inspection (counts, failed jobs). */
  queue: Queue
  /** A worker on this queue; on this setup's store unless given another (a wrapper of it). */
  startWorker(
    options: Omit<CreateWorkerOptions, 'connection' | 'queueName' | 'store'> & {
      store?: EventStore
    },
  ): ReturnType<typeof createWorker>
  settle(): Promise<void>
  /** Closes everything and deletes every key of this setup. */
  close(): Promise<void>
}

/**
 * A fresh queue, store and hand-off on the machine's Redis. `tag` names the test
 * file in the queue's name and the store's key prefix, so no two files share keys.
 */
export function queueSetup(
  tag: string,
  handoffOptions: Partial<BullmqHandoffOptions> = {},
): QueueSetup {
  const id = randomUUID().slice(0, 8)
  const queueName = `aw-${tag}-${id}`
  const prefix = `aw-${tag}-${id}:`
  const redis = new Redis(REDIS_URL)
  const store = redisStore({ client: redis, prefix })
  const { hostname, port } = new URL(REDIS_URL)
  const connection = { host: hostname, port: Number(port || 6379) }
  const handoff = bullmqHandoff({
    connection,
    queueName,
    backoff: { type: 'fixed', delay: 50 },
    ...handoffOptions,
  })
  const queue = new Queue(queueName, { connection })
  const workers: ReturnType<typeof createWorker>[] = []
  return {
    queueName,
    prefix,
    redis,
    store,
    handoff,
    queue,
    startWorker(options) {
      const worker = createWorker({
        connection,
        queueName,
        store,
        deferMs: 20,
        ...options,
      } as CreateWorkerOptions)
      workers.push(worker)
      return worker
    },
    settle: () => drained(queue),
    async close() {
      await Promise.all(workers.map((w) => w.close()))
      await handoff.close()
      await queue.obliterate({ force: true })
      await queue.close()
      const keys = await redis.keys(`${prefix}*`)
      const pending = await redis.keys(`bull:${queueName}:*`)
      if (keys.length + pending.length > 0) await redis.unlink(...keys, ...pending)
      redis.disconnect()
    },
  }
}

/** The conformance cases' queued mode: receiver hands off, a worker runs the handler. */
export const queued: Mode = {
  ok: 'queued',
  async start(adapter, options: ReceiverOptions) {
    const setup = queueSetup('conformance-queued')
    const { onConversion, ...receiverOptions } = options
    setup.startWorker({ onConversion, concurrency: 4 } as Partial<CreateWorkerOptions>)
    const app = await adapter.start({
      ...receiverOptions,
      queue: setup.handoff,
      store: setup.store,
    })
    return {
      url: app.url,
      settle: setup.settle,
      async close() {
        await app.close()
        await setup.close()
      },
    }
  },
}

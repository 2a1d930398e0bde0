import type { QueuedDelivery, QueueHandoff } from '@affiliate-webhooks/core'
import { toQueuedJobData } from '@affiliate-webhooks/core/internal'
import { type JobsOptions, Queue } from 'bullmq'
import {
  clientFor,
  DEFAULT_PREFIX,
  jobIdFor,
  PENDING_TTL_MS,
  pendingKey,
  type QueueConnection,
} from './connection.js'

const CONNECTING = new Set(['wait', 'connecting', 'connect', 'reconnecting'])

/** Options of {@link bullmqHandoff}. */
export interface BullmqHandoffOptions {
  /**
   * Redis for the queue: an ioredis client, or options for one. Given options,
   * the hand-off makes its own client that fails at once while Redis is away.
   */
  connection: QueueConnection
  /** The queue's name; workers use the same. On Redis Cluster wrap it in braces: `{webhooks}`. */
  queueName: string
  /** BullMQ key prefix. Default `bull`. */
  prefix?: string | undefined
  /**
   * Longest wait for Redis to take a job, ms; past it the receiver answers 503.
   * Default 2000, well inside the service's 10 s.
   */
  timeoutMs?: number | undefined
  /** Tries per job before it stays in the failed set. Default 10. */
  attempts?: number | undefined
  /** Back-off between tries. Default exponential from 1 s. */
  backoff?: JobsOptions['backoff'] | undefined
  /**
   * Completed jobs BullMQ keeps (its `removeOnComplete`). Dedupe does not depend on
   * it: the store remembers handled events. Default: the newest 1000.
   */
  removeOnComplete?: JobsOptions['removeOnComplete'] | undefined
  /** Failed jobs BullMQ keeps, for the CLI to list and retry. Default: all. */
  removeOnFail?: JobsOptions['removeOnFail'] | undefined
}

/** The hand-off, with the queue it adds to and a way to close what it opened. */
export interface BullmqHandoff extends QueueHandoff {
  readonly queue: Queue
  /** Closes the queue and, if the hand-off created it, its Redis client. */
  close(): Promise<void>
}

/** The queue name and timeout checked: a TypeError names the option that is wrong. */
function checkedOptions(options: BullmqHandoffOptions): { queueName: string; timeoutMs: number } {
  const { queueName } = options
  if (typeof queueName !== 'string' || queueName === '' || queueName.includes(':')) {
    throw new TypeError('bullmqHandoff: `queueName` must be a non-empty string without `:`')
  }
  const timeoutMs = options.timeoutMs ?? 2000
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1) {
    throw new TypeError(
      `bullmqHandoff: \`timeoutMs\` must be a whole number >= 1; got ${timeoutMs}`,
    )
  }
  return { queueName, timeoutMs }
}

/**
 * While the client (re)connects, a wait for it (the caller bounds it by its
 * timeout) rather than a failure at once: the first delivery after start-up
 * still gets queued. One shared wait, not a listener per request, however many
 * arrive meanwhile; undefined when the client is not connecting.
 */
function whenConnected(client: ReturnType<typeof clientFor>['client']) {
  let connecting: Promise<void> | undefined
  return () => {
    if (!CONNECTING.has(client.status)) return undefined
    connecting ??= new Promise<void>((resolve) => {
      client.once('ready', () => {
        connecting = undefined
        resolve()
      })
    })
    return connecting
  }
}

/** What adding a job needs: the connection, the queue and where it lives, the job options. */
interface JobTarget {
  client: ReturnType<typeof clientFor>['client']
  queue: Queue
  prefix: string
  queueName: string
  jobOptions: JobsOptions
}

/**
 * Adds a delivery's job. One round trip for the index entry, the failed-set
 * check and the job: the pipeline is written first, and Redis runs one
 * connection's commands in order, so the index entry lands before the job. If
 * the index write fails while the add succeeds, the answer is 503 and the
 * service's retry writes it; meanwhile a newer event of the conversion may run
 * first and this one is then dropped as stale, which is ordering's rule anyway.
 * An entry whose job never came is skipped by workers (they check its state).
 */
function jobAdder({ client, queue, prefix, queueName, jobOptions }: JobTarget) {
  const ready = whenConnected(client)
  const failedKey = `${prefix}:${queueName}:failed`
  return async (delivery: QueuedDelivery) => {
    await ready()
    const { event, conversionId, order } = delivery
    const jobId = jobIdFor(event.id)
    const pipeline = client.pipeline()
    if (conversionId !== undefined) {
      const key = pendingKey(prefix, queueName, conversionId)
      pipeline.zadd(key, order, event.id).pexpire(key, PENDING_TTL_MS)
    }
    // Read before the add; the add never moves a job into or out of the failed set.
    pipeline.zscore(failedKey, jobId)
    const written = pipeline.exec()
    const [results, job] = await Promise.all([
      written,
      queue.add(event.type, toQueuedJobData(delivery), { ...jobOptions, jobId }),
    ])
    const failed = results?.find(([error]) => error !== null)
    if (results === null || failed !== undefined) {
      throw failed?.[0] ?? new Error('Redis did not run the index update')
    }
    // BullMQ keeps an existing job of the same id, whatever its state. One that
    // failed for good would then sit in the failed set while the service is told
    // `queued` and stops retrying: a new delivery of it starts it again instead.
    if (results.at(-1)?.[1] !== null) await job.retry('failed', { resetAttemptsMade: true })
  }
}

/** `work`, or an Error when it takes longer than `timeoutMs`. */
async function within(timeoutMs: number, work: Promise<void>): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`Redis did not take the job within ${timeoutMs} ms`)),
      timeoutMs,
    )
  })
  try {
    await Promise.race([work, timeout])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * The receiver side: pass it as the receiver's `queue` option. Each verified event
 * becomes one job whose id is the event id, so a repeat delivery while the job
 * waits, runs or fails adds nothing; the receiver answers 200 `queued` only once
 * Redis accepted the job.
 */
export function bullmqHandoff(options: BullmqHandoffOptions): BullmqHandoff {
  const { queueName, timeoutMs } = checkedOptions(options)
  const prefix = options.prefix ?? DEFAULT_PREFIX
  const { client, owned } = clientFor(options.connection, 'producer')
  const queue = new Queue(queueName, { connection: client, prefix })
  // A lost Redis is reported by each refused job (503); this only keeps the
  // process from crashing on the emitter's unhandled 'error'.
  queue.on('error', () => {})
  const add = jobAdder({
    client,
    queue,
    prefix,
    queueName,
    jobOptions: {
      attempts: options.attempts ?? 10,
      backoff: options.backoff ?? { type: 'exponential', delay: 1000 },
      removeOnComplete: options.removeOnComplete ?? 1000,
      removeOnFail: options.removeOnFail ?? false,
    },
  })
  return {
    queue,
    async enqueue(delivery) {
      await within(timeoutMs, add(delivery))
    },
    async close() {
      await queue.close()
      if (owned) client.disconnect()
    },
  }
}

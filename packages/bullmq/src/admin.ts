import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import { DEFAULT_PREFIX } from './connection.js'

/** Job states the CLI counts, in the order it prints them. */
export const JOB_STATES = [
  'waiting',
  'prioritized',
  'delayed',
  'active',
  'completed',
  'failed',
] as const

/** One count per state in {@link JOB_STATES}. */
export type QueueStats = Record<(typeof JOB_STATES)[number], number>

/** Counts of the queue's jobs by state. */
export async function queueStats(queue: Queue): Promise<QueueStats> {
  const counts = await queue.getJobCounts(...JOB_STATES)
  return Object.fromEntries(JOB_STATES.map((state) => [state, counts[state] ?? 0])) as QueueStats
}

/** A job in the failed set, as the CLI lists it. */
export interface FailedJob {
  jobId: string
  /** The event id, or null when the job is not a webhook event. */
  eventId: string | null
  conversionId: number | null
  type: string | null
  attemptsMade: number
  /** The last try's error message. */
  error: string
  failedAt: number | null
}

const eventOf = (data: unknown) => {
  const event = (data as { event?: unknown } | null)?.event as
    | { id?: unknown; type?: unknown; data?: { conversion?: { id?: unknown } } }
    | undefined
  const conversionId = event?.data?.conversion?.id
  return {
    eventId: typeof event?.id === 'string' ? event.id : null,
    type: typeof event?.type === 'string' ? event.type : null,
    conversionId: typeof conversionId === 'number' ? conversionId : null,
  }
}

/** The failed set, oldest first, up to `limit` jobs. */
export async function failedJobs(queue: Queue, limit = 100): Promise<FailedJob[]> {
  const jobs = await queue.getFailed(0, limit - 1)
  return jobs
    .filter((job) => job !== undefined && job !== null)
    .map((job) => ({
      jobId: String(job.id),
      ...eventOf(job.data),
      attemptsMade: job.attemptsMade,
      error: job.failedReason ?? '',
      failedAt: job.finishedOn ?? null,
    }))
}

/**
 * Moves failed jobs back to waiting: the one with `jobId`, or all of them.
 * Resolves how many were moved; a job id that is not in the failed set moves none.
 */
export async function retryFailed(queue: Queue, which: { jobId: string } | 'all'): Promise<number> {
  if (which === 'all') {
    const before = await queue.getFailedCount()
    await queue.retryJobs({ state: 'failed' })
    return before
  }
  const job = await queue.getJob(which.jobId)
  if (job === undefined || job === null || (await job.getState()) !== 'failed') return 0
  await job.retry('failed', { resetAttemptsMade: true })
  return 1
}

/**
 * Opens a queue for inspection only, on a connection that fails at once when
 * Redis does not answer (no retries, no offline queue): a command-line check
 * should say "unreachable", not hang.
 */
export async function openQueueForAdmin(
  url: string,
  options: { queueName: string; prefix?: string },
): Promise<{ queue: Queue; close(): Promise<void> }> {
  const client = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 3000,
    retryStrategy: () => null,
    lazyConnect: true,
  })
  // The failure is reported once, by connect(); not as an unhandled event.
  client.on('error', () => {})
  await client.connect()
  const queue = new Queue(options.queueName, {
    connection: client,
    prefix: options.prefix ?? DEFAULT_PREFIX,
  })
  return {
    queue,
    async close() {
      await queue.close()
      client.disconnect()
    },
  }
}

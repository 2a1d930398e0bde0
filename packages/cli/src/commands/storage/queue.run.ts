import type { Handler, Values } from '../../framework/command.js'
import { EXIT, type Io, output, UsageError } from '../../framework/io.js'
import { formatFailedJobs, formatQueueStats } from '../../text/storage/queue-text.js'
import { BULLMQ_PACKAGES, importOptional } from '../support/optional-package.js'
import type { queue } from './queue.js'
import { QUEUE_ACTIONS } from './queue.js'

// Loaded on use only: the other commands need neither BullMQ nor a Redis client.
async function openQueue(url: string, queueName: string, prefix: string | undefined) {
  const admin = await importOptional(
    () => import('@affiliate-webhooks/bullmq/internal'),
    BULLMQ_PACKAGES,
    'queue',
  )
  return {
    admin,
    ...(await admin.openQueueForAdmin(url, { queueName, ...(prefix ? { prefix } : {}) })),
  }
}

async function act(
  action: (typeof QUEUE_ACTIONS)[number],
  target: string | undefined,
  values: Values,
  io: Io,
  opened: Awaited<ReturnType<typeof openQueue>>,
): Promise<number> {
  const { queue, admin } = opened
  if (action === 'stats') {
    const stats = await admin.queueStats(queue)
    output(io, values, stats, formatQueueStats(stats))
    return EXIT.ok
  }
  if (action === 'failed') {
    const jobs = await admin.failedJobs(queue, 1000)
    output(io, values, jobs, formatFailedJobs(jobs))
    return EXIT.ok
  }
  const moved = await admin.retryFailed(queue, values.all ? 'all' : { jobId: target as string })
  const text = `${moved} job${moved === 1 ? '' : 's'} moved back to waiting`
  output(io, values, { retried: moved }, text)
  // Naming one job that is not in the failed set is a "no".
  return moved === 0 && !values.all ? EXIT.failed : EXIT.ok
}

/** Runs `queue`. */
export const run: Handler<typeof queue.options> = async (values, io, positionals = []) => {
  const [action, target, ...extra] = positionals
  if (!QUEUE_ACTIONS.includes(action as (typeof QUEUE_ACTIONS)[number])) {
    throw new UsageError(`expected one of ${QUEUE_ACTIONS.join(', ')}; got ${action ?? 'nothing'}`)
  }
  if (extra.length > 0) throw new UsageError(`unexpected argument ${extra[0]}`)
  if (action === 'retry' && (target === undefined) === !values.all) {
    throw new UsageError('retry takes one event id or --all')
  }
  if (action !== 'retry' && (target !== undefined || values.all)) {
    throw new UsageError(`${action} takes no event id and no --all`)
  }
  const url = values.redis ?? io.env.REDIS_URL
  if (url === undefined) throw new UsageError('--redis URL is required (or set REDIS_URL)')
  if (!/^rediss?:\/\//.test(url))
    throw new UsageError('--redis must be a redis:// or rediss:// URL')
  let opened: Awaited<ReturnType<typeof openQueue>>
  try {
    opened = await openQueue(url, values.queue ?? 'affiliate-webhooks', values.prefix)
  } catch (error) {
    io.stderr.write(
      `affiliate-webhooks queue: Redis at ${new URL(url).host} unreachable: ${(error as Error).message}\n`,
    )
    return EXIT.failed
  }
  try {
    return await act(action as (typeof QUEUE_ACTIONS)[number], target, values, io, opened)
  } catch (error) {
    io.stderr.write(`affiliate-webhooks queue: ${(error as Error).message}\n`)
    if (values.debug && error instanceof Error && error.stack) io.stderr.write(`${error.stack}\n`)
    return EXIT.failed
  } finally {
    await opened.close().catch(() => {})
  }
}

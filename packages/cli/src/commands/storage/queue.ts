import { type Command, flag, str, type Values } from '../../framework/command.js'
import { EXIT, type Io, output, UsageError } from '../../framework/io.js'
import { formatFailedJobs, formatQueueStats } from '../../text/storage/queue-text.js'

const ACTIONS = ['stats', 'failed', 'retry'] as const

// Loaded on use only: the other commands need neither BullMQ nor a Redis client.
async function openQueue(url: string, queueName: string, prefix: string | undefined) {
  const admin = await import('@affiliate-webhooks/bullmq/internal')
  return {
    admin,
    ...(await admin.openQueueForAdmin(url, { queueName, ...(prefix ? { prefix } : {}) })),
  }
}

async function act(
  action: (typeof ACTIONS)[number],
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

export const queue: Command = {
  name: 'queue',
  summary: 'inspect the BullMQ hand-off queue: counts, failed jobs, retry',
  usage: ['queue stats|failed|retry [<event id> | --all] --redis URL [--queue NAME]'],
  about: `The queue that @affiliate-webhooks/bullmq's receivers add to and workers take from.

  stats              jobs by state: waiting, prioritized, delayed, active, completed, failed
  failed             failed jobs (every try used): event id, conversion id, tries, last error
  retry <event id>   move that failed job back to waiting, with its tries reset
  retry --all        move every failed job back to waiting`,
  options: {
    all: flag.bool('with retry: every failed job'),
    redis: flag.text('URL', 'Redis of the queue (redis://...); default $REDIS_URL'),
    queue: flag.text('NAME', 'queue name; default affiliate-webhooks'),
    prefix: flag.text('PREFIX', 'BullMQ key prefix; default bull'),
    json: flag.bool('machine-readable output'),
  },
  footer: `Examples:
  affiliate-webhooks queue stats --redis redis://127.0.0.1:6379
  affiliate-webhooks queue retry evt_01J... --redis redis://127.0.0.1:6379 --queue '{webhooks}'

Exit codes: 0 done, 1 the named job is not in the failed set or Redis is unreachable, 2 wrong usage.`,
  positionals: true,
  async run(values, io, positionals = []) {
    const [action, target, ...extra] = positionals
    if (!ACTIONS.includes(action as (typeof ACTIONS)[number])) {
      throw new UsageError(`expected one of ${ACTIONS.join(', ')}; got ${action ?? 'nothing'}`)
    }
    if (extra.length > 0) throw new UsageError(`unexpected argument ${extra[0]}`)
    if (action === 'retry' && (target === undefined) === !values.all) {
      throw new UsageError('retry takes one event id or --all')
    }
    if (action !== 'retry' && (target !== undefined || values.all)) {
      throw new UsageError(`${action} takes no event id and no --all`)
    }
    const url = str(values, 'redis') ?? io.env.REDIS_URL
    if (url === undefined) throw new UsageError('--redis URL is required (or set REDIS_URL)')
    if (!/^rediss?:\/\//.test(url))
      throw new UsageError('--redis must be a redis:// or rediss:// URL')
    let opened: Awaited<ReturnType<typeof openQueue>>
    try {
      opened = await openQueue(
        url,
        str(values, 'queue') ?? 'affiliate-webhooks',
        str(values, 'prefix'),
      )
    } catch (error) {
      io.stderr.write(
        `affiliate-webhooks queue: Redis at ${new URL(url).host} unreachable: ${(error as Error).message}\n`,
      )
      return EXIT.failed
    }
    try {
      return await act(action as (typeof ACTIONS)[number], target, values, io, opened)
    } catch (error) {
      io.stderr.write(`affiliate-webhooks queue: ${(error as Error).message}\n`)
      if (values.debug && error instanceof Error && error.stack) io.stderr.write(`${error.stack}\n`)
      return EXIT.failed
    } finally {
      await opened.close().catch(() => {})
    }
  },
}

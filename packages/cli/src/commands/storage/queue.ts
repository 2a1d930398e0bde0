import { defineCommand, flag } from '../../framework/command.js'

/** What `queue` does: its first argument. */
export const QUEUE_ACTIONS = ['stats', 'failed', 'retry'] as const

export const queue = defineCommand({
  actions: QUEUE_ACTIONS,
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
    debug: flag.bool('print the stack of an unexpected error'),
  },
  footer: `Examples:
  affiliate-webhooks queue stats --redis redis://127.0.0.1:6379
  affiliate-webhooks queue retry evt_01J... --redis redis://127.0.0.1:6379 --queue '{webhooks}'

Exit codes: 0 done, 1 the named job is not in the failed set or Redis is unreachable, 2 wrong usage.`,
  positionals: true,
})

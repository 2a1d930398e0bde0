import {
  COMMAND_COSTS,
  type CostedCommand,
  type CostItem,
  type FollowNotice,
  type FollowPlan,
  type StillQueued,
} from '@affiliate-webhooks/client/internal'

const count = (n: number) => Math.round(n).toLocaleString('en-US')
const percent = (fraction: number) => `${(fraction * 100).toFixed(fraction < 0.001 ? 2 : 1)} %`

/** `2 min`, `45 s`, `1.5 s`: a wait as a person reads it. */
export function formatWait(ms: number): string {
  if (ms >= 120_000) return `${Math.round(ms / 60_000)} min`
  if (ms >= 10_000) return `${Math.round(ms / 1000)} s`
  return `${Number((ms / 1000).toFixed(1))} s`
}

const costItem = (item: CostItem) => {
  const per =
    'per' in item && item.per
      ? ` per ${item.per.count === 1 ? '' : `${item.per.count} `}${item.per.unit}`
      : ''
  const when = 'when' in item && item.when ? ` when ${item.when}` : ''
  return `${item.calls}${per} (${item.what})${when}`
}

/** The `Calls:` paragraph of a command's --help, from the client's cost table. */
export function costText(command: CostedCommand): string {
  const cost = COMMAND_COSTS[command]
  const items = cost.items.map(costItem).join(' + ')
  const note = 'note' in cost ? `; ${cost.note}` : ''
  return `Calls against the account's rate limit (120 a minute) and monthly quota (250,000),
shared with your production integration: ${items}${note}.`
}

/** The line `deliveries --follow` starts with: how often it looks and what that costs. */
export function formatFollowPlan(endpointId: string, plan: FollowPlan): string {
  const { pace } = plan
  const where =
    pace.source === 'emulator'
      ? `the emulator's batch interval at time scale ${pace.timeScale}`
      : "the service's batch interval"
  const day = pace.source === 'emulator' ? ' of emulator time' : ''
  return `following ${endpointId}: a look every ${formatWait(plan.intervalMs)} with jitter (${where}), ${plan.callsPerPoll} calls a look: about ${count(plan.callsPerDay)} calls a day${day}, ${percent(plan.dailyShareOfQuota)} of the monthly quota of ${count(plan.monthlyQuota)}; Ctrl-C stops`
}

/** The line `deliveries --follow` starts with on an emulator with an event stream. */
export function formatFollowLive(endpointId: string): string {
  return `following ${endpointId} live: the emulator's event stream, each attempt and change as it happens, no API calls counted; Ctrl-C stops`
}

/** A back-off, a dropped event stream, or the stop of a follow, in one line. */
export function formatFollowNotice(
  notice: FollowNotice & { type: 'backoff' | 'stopped' | 'reconnect' },
): string {
  if (notice.type === 'reconnect') {
    return `event stream dropped (${notice.reason}); opening it again in ${formatWait(notice.delayMs)}`
  }
  if (notice.type === 'backoff') {
    const { remaining, limit } = notice.rateLimit
    return `rate limit low: ${remaining} of ${limit} calls left in this minute for the whole account; next look in ${formatWait(notice.delayMs)}`
  }
  if (notice.reason === 'quota_exceeded') {
    return 'stopped: the monthly quota is used up (429 quota_exceeded); every call of the account is refused until the 1st (UTC)'
  }
  const used = notice.quota ? count(notice.quota.used) : '?'
  const limit = notice.quota ? count(notice.quota.limit) : '?'
  return `stopped: the account has used ${used} of its ${limit} calls this month; following further would leave less than ${count(notice.reserve)} for its other work (the quota resets on the 1st, UTC)`
}

/** What `recover` says about the deliveries the service still retries. */
export function formatStillQueued(queued: StillQueued): string | undefined {
  const total = queued.pending + queued.retrying
  if (total === 0) return undefined
  const what = [
    queued.retrying ? `${queued.retrying} still retrying` : '',
    queued.pending ? `${queued.pending} pending` : '',
  ]
    .filter(Boolean)
    .join(', ')
  const due =
    queued.firstNextAttemptAt === null
      ? 'on its retry schedule'
      : queued.firstNextAttemptAt === queued.lastNextAttemptAt
        ? `next attempt due ${queued.firstNextAttemptAt}`
        : `next attempts due from ${queued.firstNextAttemptAt} to ${queued.lastNextAttemptAt}`
  return `${what}: not replayed (the service refuses a delivery it still retries); it tries them again itself, ${due} (the service's clock). Those that fail all eight attempts can be replayed then: run recover again.`
}

/** What `emulator clock` did. */
export function formatClockAdvance(by: string, moved: { now: string; attempts: number }): string {
  const attempts = `${moved.attempts} attempt${moved.attempts === 1 ? '' : 's'} made`
  return `clock moved forward ${by}, to ${moved.now} (the emulator's clock); ${attempts}`
}

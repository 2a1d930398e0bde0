import { PAGE_SIZE } from '../http/page-walk.js'
import { FOLLOW_CALLS_PER_POLL } from './follow-pacing.js'

/** Part of what a command costs in calls against the account's rate limit and quota. */
export interface CostItem {
  calls: number
  /** Undefined: made once. Otherwise `calls` for every `count` of `unit` (1 per 100 deliveries). */
  per?: { count: number; unit: string }
  /** Made only in this case ("when it was disabled"). */
  when?: string
  /** What the calls are for. */
  what: string
}

/** A command that walks pages or loops: its calls, and a note on when they repeat. */
export interface CommandCost {
  items: readonly CostItem[]
  note?: string
}

const page = (unit: string, what: string): CostItem => ({
  calls: 1,
  per: { count: PAGE_SIZE, unit },
  what,
})

/** Offset paging repeats or skips rows when the list changes during a walk; the client walks again. */
const WALK_AGAIN = 'up to three walks when the list changes under the walk'

/**
 * What each command that walks pages or loops costs, by the client's own page
 * size and polling rules: one copy of the facts, which `--help` and the README
 * state. Keys are the commands as typed (`programs list`).
 */
export const COMMAND_COSTS = {
  'endpoints list': { items: [{ calls: 1, what: 'the endpoints, one array' }] },
  deliveries: { items: [page('deliveries', 'the history, newest first')] },
  'deliveries --follow': {
    items: [
      { calls: 2, what: 'at start: the newest deliveries and the endpoint' },
      {
        calls: FOLLOW_CALLS_PER_POLL,
        per: { count: 1, unit: 'batch interval (a minute of service time)' },
        what: 'the newest deliveries and the endpoint',
      },
    ],
    note: "slower while the rate limit runs low; stops before the monthly quota runs out; none on the emulator's event stream",
  },
  'test --wait': {
    items: [
      { calls: 1, what: 'the test event' },
      { calls: 1, per: { count: 1, unit: 'look (--poll)' }, what: 'the newest deliveries' },
    ],
  },
  'replay --failed': {
    items: [
      page('failed deliveries', 'the failed deliveries'),
      { calls: 1, per: { count: 1, unit: 'failed delivery' }, what: 'its replay' },
    ],
  },
  recover: {
    items: [
      { calls: 1, what: 'the endpoint' },
      { calls: 1, when: 'it is disabled', what: 'to re-enable it' },
      page('deliveries', 'the history'),
      { calls: 1, per: { count: 1, unit: 'failed delivery' }, what: 'its replay' },
    ],
  },
  doctor: {
    items: [
      { calls: 1, what: 'the endpoint' },
      { calls: 1, what: `its ${PAGE_SIZE} newest deliveries` },
    ],
  },
  'programs list': { items: [page('programs', 'the catalogue')], note: WALK_AGAIN },
  'applications list': { items: [page('applications', 'your applications')], note: WALK_AGAIN },
} as const satisfies Record<string, CommandCost>

/** A command of {@link COMMAND_COSTS}. */
export type CostedCommand = keyof typeof COMMAND_COSTS

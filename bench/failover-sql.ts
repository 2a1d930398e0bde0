/**
 * What the SQL failover benches (bench/failover-postgres.ts,
 * bench/failover-mysql.ts) share: the stream of conversion lifecycles, the
 * deliveries to two receiver processes (test/sql/sql-receiver.mjs), the run's
 * phases (a third before the cut, a third with the link cut, the failover,
 * the last third, every event delivered again), what the new primary holds,
 * the figures, and the table of runs. Each bench brings its servers: how the
 * link is cut, how the primary fails over, and how to read the new primary.
 */
import { buildConversionEvent } from '@affiliate-webhooks/core/testing'
import { deliver, type ReceiverProcess } from '../test/sql/sql-stores.js'
import { writeResults } from './results.js'

const CONVERSIONS = 12
const STATUSES = ['pending', 'approved', 'paid'] as const
/** A run that has not finished in this long is reported as such. */
const RUN_BOUND_MS = 150_000
const CONCURRENCY = 4

export type Event = ReturnType<typeof buildConversionEvent>

/** One answer: its status (0: none within the service's 10 s), how long it took, the event, the run's phase. */
export interface Answer {
  status: number
  ms: number
  id: string
  phase: string
}

export interface Figures {
  acknowledged: number
  appliedTwice: number
  acknowledgedNeverApplied: number
  finalNotNewest: number
  answers503: number
  longestAnswerMs: number
  /** Receiver processes that exited on their own during the run. */
  receiversCrashed: number
}

/** Each conversion's lifecycle, its events one second apart, then the stream shuffled in windows of 4 with some duplicated. */
function stream(base: number): { events: Event[]; deliveries: Event[] } {
  const start = Date.now() - 3_600_000
  const events: Event[] = []
  for (let c = 0; c < CONVERSIONS; c++) {
    STATUSES.forEach((status, i) => {
      events.push(
        buildConversionEvent({
          type: i === 0 ? 'conversion.created' : 'conversion.updated',
          createdAt: start + c * 10_000 + i * 1000,
          conversion: { id: base + c, status },
        }) as Event,
      )
    })
  }
  const deliveries: Event[] = []
  for (let i = 0; i < events.length; i += 4) {
    const window = events.slice(i, i + 4)
    for (const event of window) if (Math.random() < 0.3) window.push(event)
    window.sort(() => Math.random() - 0.5)
    deliveries.push(...window)
  }
  return { events, deliveries }
}

/** Delivers `events` CONCURRENCY at a time, alternately to the two receivers. */
async function deliverAll(
  receivers: ReceiverProcess[],
  events: Event[],
  seen: Answer[],
  phase: string,
): Promise<void> {
  let next = 0
  const worker = async (w: number) => {
    while (next < events.length) {
      const event = events[next++] as Event
      const started = performance.now()
      const status = await deliver((receivers[w % 2] as ReceiverProcess).url, event)
      seen.push({ status, ms: performance.now() - started, id: event.id, phase })
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, (_, w) => worker(w)))
}

async function untilAcknowledged(receivers: ReceiverProcess[], event: Event, seen: Answer[]) {
  for (let attempt = 1; attempt <= 60; attempt++) {
    const started = performance.now()
    const status = await deliver(
      (receivers[attempt % 2] as ReceiverProcess).url,
      event,
      Math.min(attempt, 8),
    )
    seen.push({ status, ms: performance.now() - started, id: event.id, phase: 'redelivery' })
    if (status >= 200 && status < 300) return
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

interface Snapshot {
  /** Times each event's effect is there. */
  applied: Map<string, number>
  /** Each conversion's newest applied order. */
  newestApplied: Map<string, number>
  /** Each conversion's order in conversion_state. */
  state: Map<string, number>
}

/** The effects, counted per event (the same text on PostgreSQL and MySQL). */
const EFFECTS_SQL =
  'SELECT event_id, conversion_id, event_order, count(*) AS n FROM effects GROUP BY 1, 2, 3'
const STATES_SQL = 'SELECT conversion_id, event_order FROM conversion_state'

interface EffectRow {
  event_id: string
  conversion_id: unknown
  event_order: unknown
  n: unknown
}

interface StateRow {
  conversion_id: unknown
  event_order: unknown
}

/** What the new primary holds, read with `query`. */
async function snapshot(query: (sql: string) => Promise<unknown[]>): Promise<Snapshot> {
  const effects = (await query(EFFECTS_SQL)) as EffectRow[]
  const states = (await query(STATES_SQL)) as StateRow[]
  const newestApplied = new Map<string, number>()
  for (const row of effects) {
    const conversion = String(row.conversion_id)
    const order = Number(row.event_order)
    newestApplied.set(conversion, Math.max(newestApplied.get(conversion) ?? 0, order))
  }
  return {
    applied: new Map(effects.map((row) => [row.event_id, Number(row.n)])),
    newestApplied,
    state: new Map(states.map((row) => [String(row.conversion_id), Number(row.event_order)])),
  }
}

const conversionOf = (event: Event) => String(event.data.conversion.id)
const orderOf = (event: Event) => Date.parse(event.createdAt)

/**
 * `before`: the new primary once the stream is over, before anything is sent
 * again: an acknowledged event missing there is one the service will never
 * resend (lost, unless a newer event of its conversion was applied: then it is
 * rightly stale), and a conversion whose newest event was acknowledged must
 * show it. `after`: once every event was delivered again: applied twice.
 */
function figures(
  events: Event[],
  acknowledged: Set<string>,
  before: Snapshot,
  after: Snapshot,
  seen: Answer[],
): Figures & { lost: string[]; twice: string[] } {
  const lost = events.filter(
    (event) =>
      acknowledged.has(event.id) &&
      !before.applied.has(event.id) &&
      (before.newestApplied.get(conversionOf(event)) ?? 0) <= orderOf(event),
  )
  const newest = new Map<string, Event>()
  for (const event of events) {
    const known = newest.get(conversionOf(event))
    if (known === undefined || orderOf(known) < orderOf(event))
      newest.set(conversionOf(event), event)
  }
  const notNewest = [...newest.values()].filter(
    (event) =>
      acknowledged.has(event.id) && before.state.get(conversionOf(event)) !== orderOf(event),
  )
  const twice = [...after.applied].filter(([, n]) => n > 1).map(([id]) => id)
  return {
    acknowledged: acknowledged.size,
    appliedTwice: twice.length,
    acknowledgedNeverApplied: lost.length,
    finalNotNewest: notNewest.length,
    answers503: seen.filter((s) => s.status === 503).length,
    longestAnswerMs: Math.round(Math.max(...seen.map((s) => s.ms))),
    receiversCrashed: 0,
    lost: lost.map((event) => event.id),
    twice,
  }
}

/** What a bench does to its servers between the phases of a run. */
export interface FailoverSteps {
  receivers: ReceiverProcess[]
  /** Delivers the cut's third with the link to the replica cut (`deliver` sends a slice of it, its answers counted under `phase`, default `cut`). */
  cut(third: Event[], deliver: (events: Event[], phase?: string) => Promise<void>): Promise<void>
  /** Kills the primary, promotes the replica, moves the address. */
  failOver(): Promise<void>
  /** The rows of `sql` on the new primary. */
  queryNewPrimary(sql: string): Promise<unknown[]>
}

/**
 * One run's stream through the failover: a third before the cut, a third
 * during it, the failover, the last third, then every event delivered again
 * until acknowledged. The figures, with the ids lost and applied twice.
 */
export async function failoverRun(
  run: number,
  steps: FailoverSteps,
): Promise<Figures & { lost: string[]; twice: string[]; answers: Answer[] }> {
  const { receivers } = steps
  const { events, deliveries } = stream(1_000_000 * (run + 1))
  const third = Math.ceil(deliveries.length / 3)
  const seen: Answer[] = []
  const send = (part: Event[], phase = 'cut') => deliverAll(receivers, part, seen, phase)
  await send(deliveries.slice(0, third), 'before the cut')
  await steps.cut(deliveries.slice(third, 2 * third), send)
  await steps.failOver()
  await send(deliveries.slice(2 * third), 'after the failover')
  // Acknowledged before the final redelivery: what the service will never send again.
  const acknowledged = new Set(
    seen.filter((s) => s.status >= 200 && s.status < 300).map((s) => s.id),
  )
  const before = await snapshot(steps.queryNewPrimary)
  for (const event of events) await untilAcknowledged(receivers, event, seen)
  const result = figures(events, acknowledged, before, await snapshot(steps.queryNewPrimary), seen)
  result.receiversCrashed = receivers.filter(
    (r) => r.child.exitCode !== null || r.child.signalCode !== null,
  ).length
  return { ...result, answers: seen }
}

/** Per phase, how many answers of each status and the longest: `cut: 503 x4, 409 x2 (5.0 s)`. */
export function phases(answers: Answer[]): string {
  const byPhase = new Map<string, Answer[]>()
  for (const answer of answers)
    byPhase.set(answer.phase, [...(byPhase.get(answer.phase) ?? []), answer])
  return [...byPhase]
    .map(([phase, all]) => {
      const counts = new Map<number, number>()
      for (const { status } of all) counts.set(status, (counts.get(status) ?? 0) + 1)
      const statuses = [...counts].map(([status, n]) => `${status} x${n}`)
      const longest = Math.max(...all.map((answer) => answer.ms)) / 1000
      return `${phase}: ${statuses.join(', ')} (${longest.toFixed(1)} s)`
    })
    .join('; ')
}

const bounded = <T>(work: Promise<T>, ms: number): Promise<T | 'unbounded'> =>
  Promise.race([
    work,
    new Promise<'unbounded'>((resolve) => setTimeout(resolve, ms, 'unbounded').unref()),
  ])

/**
 * `runs` runs of each configuration, one after the other, each bounded; the
 * table printed and the figures written to bench/results/<bench>.json.
 * `oneRun` returns the run's figures.
 */
export async function benchRuns<Config extends { name: string }>(
  bench: string,
  configs: readonly Config[],
  runs: number,
  oneRun: (config: Config, run: number) => Promise<Figures & { answers?: Answer[] }>,
): Promise<void> {
  const rows: string[] = []
  const targets: Record<string, number> = {}
  for (const config of configs) {
    for (let run = 0; run < runs; run++) {
      const started = performance.now()
      const figures = await bounded(oneRun(config, run), RUN_BOUND_MS)
      const seconds = ((performance.now() - started) / 1000).toFixed(0)
      if (figures === 'unbounded') {
        rows.push(
          `| ${config.name} | run ${run + 1} | did not finish within ${RUN_BOUND_MS / 1000} s |`,
        )
        console.log(rows.at(-1))
        continue
      }
      const f = figures
      rows.push(
        `| ${config.name} | ${run + 1} | ${f.acknowledged} | ${f.appliedTwice} | ${f.acknowledgedNeverApplied} | ${f.finalNotNewest} | ${f.answers503} | ${(f.longestAnswerMs / 1000).toFixed(1)} s | ${f.receiversCrashed} |`,
      )
      for (const [key, value] of Object.entries(f))
        if (typeof value === 'number') targets[`${config.name} #${run + 1} ${key}`] = value
      console.log(`${rows.at(-1)} (${seconds} s)`)
      if (f.answers !== undefined) console.log(`  ${phases(f.answers)}`)
    }
  }
  const table = [
    '| configuration | run | acknowledged | applied twice | acknowledged, never applied | final state not newest | 503s | longest answer | receivers crashed |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows,
  ]
  console.log(table.join('\n'))
  writeResults(bench, { ratios: {}, targets })
}

/**
 * Where a run's figures go (bench/results/<name>.json): the bench's own file,
 * or, for the configurations picked by `part`, a file of their own, so that a
 * run of some does not overwrite the figures of all.
 */
export const resultsName = (bench: string, part: string | undefined) =>
  part === undefined ? bench : `${bench}-${part.toLowerCase()}`

/** The configurations whose name has `part` (any case); all of them without it. */
export function named<Config extends { name: string }>(
  configs: readonly Config[],
  part: string | undefined,
): Config[] {
  const wanted = part?.toLowerCase()
  return configs.filter(
    (config) => wanted === undefined || config.name.toLowerCase().includes(wanted),
  )
}

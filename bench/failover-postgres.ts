/**
 * The PostgreSQL store across a failover (issue 48), measured: per
 * configuration (asynchronous or synchronous standby; node-postgres behind a
 * TCP proxy that moves to the new primary, postgres.js with both hosts and
 * target_session_attrs=primary), two receiver processes (test/sql/sql-receiver.mjs)
 * take a stream of conversion lifecycles with duplicates and shuffles. A third
 * of it goes before the cut, a third with the link to the standby cut (the
 * standby frozen, its WAL sender ended), then the primary is killed (SIGKILL),
 * the standby promoted, the last third delivered against the new primary, and
 * every event delivered again until acknowledged (the service's retries, a
 * replay). Counted on the new primary: events acknowledged (2xx before the
 * final redelivery), acknowledged and never applied (missing once the stream
 * is over, and no newer event of the conversion applied either: the service
 * will not send it again), conversions whose newest event was acknowledged and
 * whose state is not it, applied twice (after the redelivery), 503s, the
 * longest answer. Each run is bounded; BENCH_RUNS runs
 * (default 2) per configuration. Figures to bench/results/failover-postgres.json.
 *
 *   npm run bench:failover:postgres
 */
import { buildConversionEvent } from '@affiliate-webhooks/core/testing'
import pg from 'pg'
import { deliver, type ReceiverProcess, startReceiver } from '../test/sql/sql-stores.js'
import {
  type MovableProxy,
  movableProxy,
  queryOnce,
  startReplicatedPostgres,
} from '../test/support/postgres-failover.js'
import { writeResults } from './results.js'

const RUNS = Number(process.env.BENCH_RUNS ?? 2)
const CONVERSIONS = 12
const STATUSES = ['pending', 'approved', 'paid'] as const
/** A run that has not finished in this long is reported as such. */
const RUN_BOUND_MS = 150_000
const CONCURRENCY = 4

interface Config {
  name: string
  synchronous: boolean
  store: 'postgres' | 'postgresjs'
}

const CONFIGS: Config[] = [
  { name: 'PostgreSQL async, pg', synchronous: false, store: 'postgres' },
  { name: 'PostgreSQL async, postgres.js', synchronous: false, store: 'postgresjs' },
  { name: 'PostgreSQL sync, pg', synchronous: true, store: 'postgres' },
  { name: 'PostgreSQL sync, postgres.js', synchronous: true, store: 'postgresjs' },
]

const TABLES = [
  'CREATE TABLE effects (id bigserial PRIMARY KEY, event_id text NOT NULL, conversion_id bigint NOT NULL, event_order bigint NOT NULL, pid integer NOT NULL)',
  'CREATE TABLE conversion_state (conversion_id bigint PRIMARY KEY, status text NOT NULL, event_order bigint NOT NULL)',
]

type Event = ReturnType<typeof buildConversionEvent>

interface Figures {
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
  seen: { status: number; ms: number; id: string }[],
): Promise<void> {
  let next = 0
  const worker = async (w: number) => {
    while (next < events.length) {
      const event = events[next++] as Event
      const started = performance.now()
      const status = await deliver((receivers[w % 2] as ReceiverProcess).url, event)
      seen.push({ status, ms: performance.now() - started, id: event.id })
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, (_, w) => worker(w)))
}

async function untilAcknowledged(
  receivers: ReceiverProcess[],
  event: Event,
  seen: { status: number; ms: number; id: string }[],
) {
  for (let attempt = 1; attempt <= 60; attempt++) {
    const started = performance.now()
    const status = await deliver(
      (receivers[attempt % 2] as ReceiverProcess).url,
      event,
      Math.min(attempt, 8),
    )
    seen.push({ status, ms: performance.now() - started, id: event.id })
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

/** What the new primary holds. */
async function snapshot(url: string): Promise<Snapshot> {
  const effects = await queryOnce<{
    event_id: string
    conversion_id: string
    event_order: string
    n: number
  }>(
    url,
    'SELECT event_id, conversion_id, event_order, count(*)::int AS n FROM effects GROUP BY 1, 2, 3',
  )
  const states = await queryOnce<{ conversion_id: string; event_order: string }>(
    url,
    'SELECT conversion_id, event_order FROM conversion_state',
  )
  const newestApplied = new Map<string, number>()
  for (const row of effects) {
    const order = Number(row.event_order)
    newestApplied.set(row.conversion_id, Math.max(newestApplied.get(row.conversion_id) ?? 0, order))
  }
  return {
    applied: new Map(effects.map((row) => [row.event_id, row.n])),
    newestApplied,
    state: new Map(states.map((row) => [row.conversion_id, Number(row.event_order)])),
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
  seen: { status: number; ms: number }[],
): Figures {
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
  return {
    acknowledged: acknowledged.size,
    appliedTwice: [...after.applied.values()].filter((n) => n > 1).length,
    acknowledgedNeverApplied: lost.length,
    finalNotNewest: notNewest.length,
    answers503: seen.filter((s) => s.status === 503).length,
    longestAnswerMs: Math.round(Math.max(...seen.map((s) => s.ms))),
    receiversCrashed: 0,
  }
}

async function oneRun(config: Config, run: number): Promise<Figures> {
  const replicated = await startReplicatedPostgres(config.synchronous)
  let proxy: MovableProxy | undefined
  const receivers: ReceiverProcess[] = []
  try {
    for (const statement of TABLES) await queryOnce(replicated.primary.url, statement)
    let url: string
    if (config.store === 'postgres') {
      proxy = await movableProxy(replicated.primary.port)
      url = `postgres://postgres@127.0.0.1:${proxy.port}/postgres`
    } else {
      url = `postgres://postgres@127.0.0.1:${replicated.primary.port},127.0.0.1:${replicated.standby.port}/postgres?target_session_attrs=primary`
    }
    for (let i = 0; i < 2; i++)
      receivers.push(await startReceiver({ STORE: config.store, DATABASE_URL: url }))
    const { events, deliveries } = stream(1_000_000 * (run + 1))
    const third = Math.ceil(deliveries.length / 3)
    const seen: { status: number; ms: number; id: string }[] = []
    await deliverAll(receivers, deliveries.slice(0, third), seen)
    await replicated.cutLink()
    await deliverAll(receivers, deliveries.slice(third, 2 * third), seen)
    replicated.killPrimary()
    await replicated.promote()
    proxy?.moveTo(replicated.standby.port)
    await deliverAll(receivers, deliveries.slice(2 * third), seen)
    // Acknowledged before the final redelivery: what the service will never send again.
    const acknowledged = new Set(
      seen.filter((s) => s.status >= 200 && s.status < 300).map((s) => s.id),
    )
    const before = await snapshot(replicated.standby.url)
    for (const event of events) await untilAcknowledged(receivers, event, seen)
    const result = figures(
      events,
      acknowledged,
      before,
      await snapshot(replicated.standby.url),
      seen,
    )
    result.receiversCrashed = receivers.filter(
      (r) => r.child.exitCode !== null || r.child.signalCode !== null,
    ).length
    return result
  } finally {
    await Promise.all(receivers.map((r) => r.kill()))
    await proxy?.close()
    await replicated.destroy()
  }
}

const bounded = <T>(work: Promise<T>, ms: number): Promise<T | 'unbounded'> =>
  Promise.race([
    work,
    new Promise<'unbounded'>((resolve) => setTimeout(resolve, ms, 'unbounded').unref()),
  ])

const rows: string[] = []
const targets: Record<string, number> = {}
pg.defaults.parseInt8 = false
for (const config of CONFIGS) {
  for (let run = 0; run < RUNS; run++) {
    const figures = await bounded(oneRun(config, run), RUN_BOUND_MS)
    if (figures === 'unbounded') {
      rows.push(
        `| ${config.name} | run ${run + 1} | did not finish within ${RUN_BOUND_MS / 1000} s |`,
      )
      continue
    }
    const f = figures
    rows.push(
      `| ${config.name} | ${run + 1} | ${f.acknowledged} | ${f.appliedTwice} | ${f.acknowledgedNeverApplied} | ${f.finalNotNewest} | ${f.answers503} | ${(f.longestAnswerMs / 1000).toFixed(1)} s | ${f.receiversCrashed} |`,
    )
    for (const [key, value] of Object.entries(f))
      targets[`${config.name} #${run + 1} ${key}`] = value
    console.log(rows.at(-1))
  }
}
const table = [
  '| configuration | run | acknowledged | applied twice | acknowledged, never applied | final state not newest | 503s | longest answer | receivers crashed |',
  '|---|---|---|---|---|---|---|---|---|',
  ...rows,
]
console.log(table.join('\n'))
writeResults('failover-postgres', { ratios: {}, targets })
process.exit(0)

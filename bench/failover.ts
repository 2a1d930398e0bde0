/**
 * What a failover costs each store configuration: the run of
 * test/support/failover-scenario.ts (two receiver processes; a stream of
 * lifecycles with duplicates and shuffles; the replication link cut mid-stream;
 * the primary SIGKILLed, the replica promoted; the stream continued; every
 * event delivered again), RUNS times per configuration (default 3), each on
 * servers of its own started for the run and removed after.
 *
 * Run with `npm run bench:failover` (needs redis-server on the PATH, and the
 * Redis at REDIS_URL, default 127.0.0.1:6379, for the receivers' effects log).
 * `npm run bench:failover -- redis` runs only the configurations whose name
 * contains "redis". A configuration is one function that starts its servers and
 * returns the run's target and how to stop them: add one per store.
 */
import { writeFileSync } from 'node:fs'
import {
  type FailoverFigures,
  type FailoverTarget,
  runFailoverScenario,
} from '../test/support/failover-scenario.js'
import { redisFailoverTarget, startRedisFailover } from '../test/support/redis-failover.js'

interface Configuration {
  name: string
  start(): Promise<{ target: FailoverTarget; stop(): Promise<void> }>
}

const redis = (replication?: { replicas: number; timeoutMs: number }) => async () => {
  const failover = await startRedisFailover()
  return { target: redisFailoverTarget(failover, replication), stop: () => failover.stop() }
}

const CONFIGURATIONS: Configuration[] = [
  { name: 'Redis, default', start: redis() },
  {
    name: 'Redis, replication { replicas: 1, timeoutMs: 500 }',
    start: redis({ replicas: 1, timeoutMs: 500 }),
  },
]

const RUNS = Number(process.env.RUNS ?? 3)
const only = process.argv[2]?.toLowerCase()
const chosen = CONFIGURATIONS.filter((c) => !only || c.name.toLowerCase().includes(only))

const columns: [string, (f: FailoverFigures) => string | number][] = [
  ['events', (f) => f.events],
  ['acknowledged before redelivery', (f) => f.acknowledged],
  ['2xx of the deliveries during the cut', (f) => `${f.cutAcknowledged}/${f.cutDeliveries}`],
  ['applied after its 2xx', (f) => f.appliedAfterAcknowledged],
  ['applied twice (any)', (f) => f.appliedTwice],
  ['acknowledged, never applied', (f) => f.acknowledgedNeverApplied],
  ['older applied over a newer acknowledged', (f) => f.olderOverNewerAcknowledged],
  ['final state not the newest event', (f) => f.wrongFinalState],
  ['503s', (f) => f.answers503],
  [
    'other non-2xx',
    (f) =>
      Object.entries(f.non2xx)
        .filter(([status]) => status !== '503')
        .map(([status, n]) => `${n}x${status}`)
        .join(' ') || '0',
  ],
  ['longest answer ms', (f) => f.longestAnswerMs],
  ['kill to new primary ms', (f) => f.failoverMs],
  ['run s', (f) => (f.runMs / 1000).toFixed(1)],
]

const lines = [
  '# Failover runs',
  '',
  `Node ${process.version}, ${new Date().toISOString()}; ${RUNS} run(s) per configuration. Command: npm run bench:failover`,
  '',
  `| configuration | run | ${columns.map(([name]) => name).join(' | ')} |`,
  `|---|---:|${columns.map(() => '---:').join('|')}|`,
]
console.log(lines.join('\n'))
for (const configuration of chosen) {
  for (let run = 1; run <= RUNS; run++) {
    const { target, stop } = await configuration.start()
    try {
      const figures = await runFailoverScenario(target, { seed: 48 + run })
      const line = `| ${configuration.name} | ${run} | ${columns.map(([, cell]) => cell(figures)).join(' | ')} |`
      lines.push(line)
      console.log(line)
    } finally {
      await stop()
    }
  }
}
if (!only && process.env.BENCH_RESULTS === undefined) {
  writeFileSync(new URL('results/failover.md', import.meta.url), `${lines.join('\n')}\n`)
}

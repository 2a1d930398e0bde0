/**
 * CLI start: what `affiliate-webhooks --version` and `--help` cost a fresh
 * process, against a bare `node -e 0` measured in the same run. Each sample is a
 * fresh `node` process (the binary as npm links it, bin/affiliate-webhooks.js
 * loading the built dist/cli.js); samples of the three are interleaved so a busy
 * moment of the shared machine falls on all of them; the median of each is
 * reported, with its ratio to the bare start (target: at most 1.6).
 *
 * Run with `npm run bench:cli` (it builds first). Targets are reported, never
 * asserted; the results go to bench/results/cli-start.json. BENCH_QUICK=1 takes 2
 * samples each and BENCH_RESULTS names another file
 * (test/packaging/bench-guard.test.ts).
 */
import { spawnSync } from 'node:child_process'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { updateReadme, writeResults } from './results.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const QUICK = process.env.BENCH_QUICK === '1'
const SAMPLES = QUICK ? 2 : 41
/** At most this many times the bare start: the target. */
const TARGET_RATIO = 1.6
const BIN = join(root, 'packages/cli/bin/affiliate-webhooks.js')

const CASES = {
  'node -e 0': ['-e', '0'],
  '--version': [BIN, '--version'],
  '--help': [BIN, '--help'],
} as const satisfies Record<string, readonly string[]>
type Case = keyof typeof CASES

/** Wall ms of one fresh process, from spawn to exit. */
function sample(args: readonly string[]): number {
  const start = process.hrtime.bigint()
  const run = spawnSync(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  const ms = Number(process.hrtime.bigint() - start) / 1e6
  if (run.status !== 0) throw new Error(`${args.join(' ')} exited ${run.status}: ${run.stderr}`)
  return ms
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

const names = Object.keys(CASES) as Case[]
const samples = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<
  Case,
  number[]
>
for (const name of names) sample(CASES[name]) // warm the file cache once
for (let round = 0; round < SAMPLES; round++) {
  for (const name of names) samples[name].push(sample(CASES[name]))
}
const medians = Object.fromEntries(names.map((name) => [name, median(samples[name])])) as Record<
  Case,
  number
>
const bare = medians['node -e 0']
const ratio = (name: Case) => medians[name] / bare

writeResults(
  'cli-start',
  {
    ratios: { '--version / node -e 0': ratio('--version'), '--help / node -e 0': ratio('--help') },
    targets: { 'worst ratio (target <= 1.6)': Math.max(ratio('--version'), ratio('--help')) },
  },
  QUICK,
)

const report = [
  `Node ${process.version} (${process.platform} ${process.arch}), ${cpus().length} x ${cpus()[0]?.model ?? 'unknown CPU'}`,
  'Command: npm run bench:cli -> npm run build --silent && node --import tsx bench/cli-start.bench.ts',
  `Method: ${SAMPLES} fresh processes of each, interleaved, wall ms from spawn to exit; medians. The CLI runs as npm links it (bin/affiliate-webhooks.js -> dist/cli.js).`,
  '',
  '| run | median ms | / node -e 0 | within 1.6x |',
  '| --- | ---: | ---: | :---: |',
  ...names.map(
    (name) =>
      `| \`${name}\` | ${medians[name].toFixed(1)} | ${ratio(name).toFixed(2)} | ${name === 'node -e 0' ? '' : ratio(name) <= TARGET_RATIO ? 'yes' : 'no'} |`,
  ),
]
updateReadme('cli-start', report, QUICK)
process.stdout.write(`${report.join('\n')}\n`)

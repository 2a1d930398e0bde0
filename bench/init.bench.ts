/**
 * `affiliate-webhooks init` itself (finding the stack, planning, writing; the
 * package install left out with --skip-install), on the committed Next.js +
 * Prisma and Express + SQLite apps of test/cli/init-apps, against a bare
 * `node -e 0` in the same run. Each sample is a fresh process on a fresh copy of
 * the app; samples are interleaved; medians reported. The goal is
 * absolute (init within 2 s): the median ms is reported beside the ratio.
 *
 * Run with `npm run bench:init` (it builds first). Targets are reported, never
 * asserted; the results go to bench/results/init.json. BENCH_QUICK=1 takes 2
 * samples each and BENCH_RESULTS names another file (test/packaging/bench-guard.test.ts).
 */
import { spawnSync } from 'node:child_process'
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { updateReadme, writeResults } from './results.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const QUICK = process.env.BENCH_QUICK === '1'
const SAMPLES = QUICK ? 2 : 21
/** The goal for init without the install, ms. */
const TARGET_MS = 2000
const BIN = join(root, 'packages/cli/bin/affiliate-webhooks.js')
const work = mkdtempSync(join(tmpdir(), 'aw-bench-init-'))

let copies = 0
/** A fresh copy of a committed app, so every sample writes its files. */
const fresh = (app: string) => {
  const dir = join(work, `${app}-${copies++}`)
  cpSync(join(root, 'test/cli/init-apps', app), dir, { recursive: true })
  return dir
}

const CASES = {
  'node -e 0': () => ['-e', '0'],
  'init --yes (Next.js + Prisma)': () => [
    BIN,
    'init',
    '--dir',
    fresh('next-prisma'),
    '--yes',
    '--skip-install',
  ],
  'init --yes (Express + SQLite)': () => [
    BIN,
    'init',
    '--dir',
    fresh('express-sqlite'),
    '--yes',
    '--skip-install',
  ],
  'init --dry-run (Next.js + Prisma)': () => [
    BIN,
    'init',
    '--dir',
    fresh('next-prisma'),
    '--dry-run',
  ],
} as const satisfies Record<string, () => string[]>
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
for (const name of names) sample(CASES[name]()) // warm the file cache once
for (let round = 0; round < SAMPLES; round++) {
  for (const name of names) samples[name].push(sample(CASES[name]()))
}
rmSync(work, { recursive: true, force: true })
const medians = Object.fromEntries(names.map((name) => [name, median(samples[name])])) as Record<
  Case,
  number
>
const bare = medians['node -e 0']
const worst = Math.max(...names.filter((name) => name !== 'node -e 0').map((name) => medians[name]))

writeResults(
  'init',
  {
    ratios: Object.fromEntries(
      names
        .filter((name) => name !== 'node -e 0')
        .map((name) => [`${name} / node -e 0`, medians[name] / bare]),
    ),
    targets: { 'slowest init, median ms (target <= 2000)': worst },
  },
  QUICK,
)

const report = [
  `Node ${process.version} (${process.platform} ${process.arch}), ${cpus().length} x ${cpus()[0]?.model ?? 'unknown CPU'}`,
  'Command: npm run bench:init -> npm run build --silent && node --import tsx bench/init.bench.ts',
  `Method: ${SAMPLES} fresh processes of each, each on a fresh copy of the app, interleaved, wall ms from spawn to exit; medians. The install is left out (--skip-install).`,
  '',
  `| run | median ms | / node -e 0 | within ${TARGET_MS} ms |`,
  '| --- | ---: | ---: | :---: |',
  ...names.map(
    (name) =>
      `| \`${name}\` | ${medians[name].toFixed(1)} | ${(medians[name] / bare).toFixed(2)} | ${name === 'node -e 0' ? '' : medians[name] <= TARGET_MS ? 'yes' : 'no'} |`,
  ),
]
updateReadme('init', report, QUICK)
process.stdout.write(`${report.join('\n')}\n`)

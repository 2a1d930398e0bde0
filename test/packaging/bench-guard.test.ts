/**
 * The benchmarks as a regression guard, without timing anything. Every
 * bench/*.bench.ts has its committed bench/results/<name>.json, whose ratios
 * and targets are finite numbers. The two that need no servers (verify, cold)
 * are run with tiny rounds and must still produce every ratio and target their
 * committed file has; so is cli-start (it needs only the built CLI). The figures of such a run mean nothing and are never
 * compared.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'

const exec = promisify(execFile)
const root = new URL('../..', import.meta.url).pathname
const work = mkdtempSync(join(tmpdir(), 'aw-bench-guard-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

interface Results {
  ratios: Record<string, unknown>
  targets: Record<string, unknown>
}

const read = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Results
const committed = (bench: string) => read(join(root, 'bench/results', `${bench}.json`))
const BENCHES = readdirSync(join(root, 'bench'))
  .filter((file) => file.endsWith('.bench.ts'))
  .map((file) => file.slice(0, -'.bench.ts'.length))

/** Every figure finite (a difference to a floor may be negative; a ratio may not be 0). */
function expectFinite(results: Results): void {
  expect(Object.keys(results.ratios).length).toBeGreaterThan(0)
  expect(Object.keys(results.targets).length).toBeGreaterThan(0)
  for (const [name, value] of [
    ...Object.entries(results.ratios),
    ...Object.entries(results.targets),
  ]) {
    expect({ name, finite: typeof value === 'number' && Number.isFinite(value) }).toEqual({
      name,
      finite: true,
    })
  }
}

/** Runs a bench quickly into a file of its own; its ratios and targets must match the committed ones. */
async function quickRun(bench: string, nodeArgs: string[]): Promise<void> {
  const out = join(work, `${bench}.json`)
  await exec(process.execPath, [...nodeArgs, '--import', 'tsx', `bench/${bench}.bench.ts`], {
    cwd: root,
    env: { ...process.env, BENCH_QUICK: '1', BENCH_RESULTS: out },
  })
  const quick = read(out)
  const saved = committed(bench)
  expect(Object.keys(quick.ratios).sort()).toEqual(Object.keys(saved.ratios).sort())
  expect(Object.keys(quick.targets).sort()).toEqual(Object.keys(saved.targets).sort())
  expectFinite(quick)
}

describe('the benchmarks as a regression guard (not timed)', () => {
  it('has a bench for each of verify, cold, cli-start, init, init-user, http, redis, queue, emulator and sql', () => {
    expect(BENCHES.sort()).toEqual([
      'cli-start',
      'cold',
      'emulator',
      'http',
      'init',
      'init-user',
      'queue',
      'redis',
      'sql',
      'verify',
    ])
  })

  it.each(BENCHES)(
    'bench/results/%s.json has its ratios and targets, each a finite number',
    (bench) => {
      expectFinite(committed(bench))
    },
  )

  it('npm run bench still writes every ratio and target of bench/results/verify.json', async () => {
    expect(Object.keys(committed('verify').ratios).length).toBeGreaterThan(10)
    await quickRun('verify', ['--expose-gc'])
  }, 120_000)

  it('npm run bench:cold still writes every ratio and target of bench/results/cold.json', async () => {
    await quickRun('cold', [])
  }, 120_000)

  it('npm run bench:cli still writes every ratio and target of bench/results/cli-start.json', async () => {
    await quickRun('cli-start', [])
  }, 120_000)
})

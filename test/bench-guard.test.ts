/**
 * The benchmark as a regression guard, without timing anything: bench/verify.bench.ts
 * run with tiny rounds must still produce every ratio and target the committed
 * bench/results/verify.json has, each a finite positive number. The figures of
 * such a run mean nothing and are never compared.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'

const exec = promisify(execFile)
const root = new URL('..', import.meta.url).pathname
const work = mkdtempSync(join(tmpdir(), 'aw-bench-guard-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

interface Results {
  ratios: Record<string, unknown>
  targets: Record<string, unknown>
}

const read = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Results

describe('npm run bench as a regression guard (not timed)', () => {
  it('still writes every ratio and target of bench/results/verify.json, each a finite number', async () => {
    const out = join(work, 'verify.json')
    await exec(process.execPath, ['--expose-gc', '--import', 'tsx', 'bench/verify.bench.ts'], {
      cwd: root,
      env: { ...process.env, BENCH_QUICK: '1', BENCH_RESULTS: out },
    })
    const committed = read(join(root, 'bench/results/verify.json'))
    const quick = read(out)
    expect(Object.keys(committed.ratios).length).toBeGreaterThan(10)
    expect(Object.keys(quick.ratios).sort()).toEqual(Object.keys(committed.ratios).sort())
    expect(Object.keys(quick.targets).sort()).toEqual(Object.keys(committed.targets).sort())
    for (const [name, value] of [
      ...Object.entries(quick.ratios),
      ...Object.entries(quick.targets),
    ]) {
      expect({
        name,
        finite: typeof value === 'number' && Number.isFinite(value) && value > 0,
      }).toEqual({ name, finite: true })
    }
  }, 120_000)
})

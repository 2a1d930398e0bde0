/**
 * Where every benchmark leaves its figures: bench/results/<name>.json, with the
 * ratios to its floor and its targets, so a regression guard (and a reader) can
 * find them without rerunning anything. BENCH_RESULTS names another file, for a
 * guard run whose figures must not replace the committed ones.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'

export interface BenchResults {
  /** Each case against the floor measured in the same run (or a difference to it, named so). */
  ratios: Record<string, number>
  /** Each target's figure, as the bench reports it against its goal. */
  targets: Record<string, number>
}

/** The major version of the project's own Node (the `node` devDependency). */
function projectNodeMajor(): number {
  const manifest = JSON.parse(
    readFileSync(fileURLToPath(new URL('../package.json', import.meta.url)), 'utf8'),
  ) as { devDependencies?: Record<string, string> }
  return Number(/\d+/.exec(manifest.devDependencies?.node ?? '')?.[0])
}

/** True on the project's Node; a run on another (`npm run bench:node22`) keeps its figures apart. */
export const onProjectNode = (): boolean =>
  Number(process.versions.node.split('.')[0]) === projectNodeMajor()

/**
 * Writes the results of `bench` (its file name without .bench.ts); returns the
 * path. On another Node than the project's the file is `<bench>.node<major>.json`.
 */
export function writeResults(bench: string, results: BenchResults, quick = false): string {
  const suffix = onProjectNode() ? '' : `.node${process.versions.node.split('.')[0]}`
  const path =
    process.env.BENCH_RESULTS ??
    fileURLToPath(new URL(`results/${bench}${suffix}.json`, import.meta.url))
  const file = {
    node: process.version,
    cpus: `${cpus().length} x ${cpus()[0]?.model ?? 'unknown CPU'}`,
    date: new Date().toISOString().slice(0, 10),
    quick,
    ...results,
  }
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, `${JSON.stringify(file, null, 2)}\n`)
  return path
}

/**
 * Puts a bench's report into bench/README.md between `<!-- <name>.bench: start -->`
 * and its end marker; a full run on the project's Node only (not quick, not into
 * another results file).
 */
export function updateReadme(bench: string, report: readonly string[], quick = false): void {
  if (quick || process.env.BENCH_RESULTS !== undefined || !onProjectNode()) return
  const path = fileURLToPath(new URL('README.md', import.meta.url))
  const readme = readFileSync(path, 'utf8')
  const start = `<!-- ${bench}.bench: start -->`
  const end = `<!-- ${bench}.bench: end -->`
  const from = readme.indexOf(start)
  const to = readme.indexOf(end)
  if (from === -1 || to < from) return
  const body = report.join('\n').trim()
  writeFileSync(path, `${readme.slice(0, from + start.length)}\n${body}\n${readme.slice(to)}`)
}

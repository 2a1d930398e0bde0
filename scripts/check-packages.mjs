// Checks every workspace package as npm would publish it: publint --strict and
// arethetypeswrong (node10, node16 CJS and ESM, bundler resolution). Prints one
// row per package with its packed size, and exits 1 on any problem.
//   npm run check:packages   (needs a build: npm run build)
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

const bin = (name) => join(process.cwd(), 'node_modules/.bin', name)
const root = JSON.parse(readFileSync('package.json', 'utf8'))
const dirs = root.workspaces.filter((w) => w.startsWith('packages/'))

function run(command, args, cwd) {
  try {
    return {
      ok: true,
      output: execFileSync(command, args, { cwd, encoding: 'utf8', stdio: 'pipe' }),
    }
  } catch (error) {
    return { ok: false, output: `${error.stdout ?? ''}${error.stderr ?? ''}` }
  }
}

const rows = []
let failed = false
for (const dir of dirs) {
  const { name } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  const [pack] = JSON.parse(run('npm', ['pack', '--dry-run', '--json', '--silent'], dir).output)
  const publint = run(bin('publint'), ['--strict'], dir)
  const attw = run(bin('attw'), ['--pack', '.', '--format', 'json'], dir)
  let attwSummary = 'failed to run'
  try {
    const report = JSON.parse(attw.output)
    const problems = Object.values(report.analysis?.problems ?? {}).flat().length
    attwSummary =
      problems === 0 ? 'no problems (node10, node16 CJS/ESM, bundler)' : `${problems} problem(s)`
    if (problems > 0) attw.ok = false
  } catch {
    attw.ok = false
  }
  if (!publint.ok || !publint.output.includes('All good')) {
    failed = true
    console.error(`\n${name}: publint\n${publint.output}`)
  }
  if (!attw.ok) {
    failed = true
    console.error(`\n${name}: arethetypeswrong\n${run(bin('attw'), ['--pack', '.'], dir).output}`)
  }
  rows.push([
    name,
    `${(pack.size / 1024).toFixed(1)} kB`,
    `${(pack.unpackedSize / 1024).toFixed(1)} kB`,
    String(pack.entryCount),
    publint.ok && publint.output.includes('All good') ? 'all good' : 'FAILED',
    attwSummary,
  ])
}

const header = ['package', 'packed', 'unpacked', 'files', 'publint --strict', 'attw']
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
const line = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`
console.log(line(header))
console.log(`| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`)
for (const row of rows) console.log(line(row))
process.exit(failed ? 1 : 0)

// Builds every workspace package that has a build script, dependencies first, so a
// package's type bundle always finds the types of the packages it imports.
//
// Two things keep it out of the way:
// - a package whose inputs (its sources, manifest, build configs, the build tools'
//   versions, and the stamps of the repo packages it depends on) have not changed
//   since its last successful build is skipped; the stamps live in
//   node_modules/.cache, never in dist (dist is what npm packs);
// - packages whose dependencies are built run side by side, one per core.
//
// `--force` (or AW_BUILD_FORCE=1) rebuilds everything; `--dry-run` prints the
// packages it would build, in order, and builds none. CI starts from a clean
// checkout, so it always builds from scratch.
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { join, relative } from 'node:path'

const args = new Set(process.argv.slice(2))
const force = args.has('--force') || process.env.AW_BUILD_FORCE === '1'
const dryRun = args.has('--dry-run')
const cacheDir =
  process.env.AW_BUILD_CACHE || join('node_modules', '.cache', 'affiliate-webhooks-build')

const root = JSON.parse(readFileSync('package.json', 'utf8'))
const packages = new Map()
for (const dir of root.workspaces.filter((w) => w.startsWith('packages/'))) {
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  if (manifest.scripts?.build) packages.set(manifest.name, { dir, manifest })
}

const repoDeps = (manifest) =>
  Object.keys({
    ...manifest.dependencies,
    ...manifest.peerDependencies,
    ...manifest.devDependencies,
  }).filter((dep) => packages.has(dep))

// Fail on a cycle before anything runs.
const checkCycles = (name, trail = []) => {
  if (trail.includes(name)) throw new Error(`dependency cycle: ${[...trail, name].join(' -> ')}`)
  for (const dep of repoDeps(packages.get(name).manifest)) checkCycles(dep, [...trail, name])
}
for (const name of packages.keys()) checkCycles(name)

/** Every file under dir that can change a build, tests and outputs aside. */
const inputFiles = (dir) => {
  const files = []
  const walk = (at) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      if (entry.name === 'dist' || entry.name === 'node_modules') continue
      const path = join(at, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (!/\.test\.tsx?$/.test(entry.name) && !entry.name.endsWith('.md')) files.push(path)
    }
  }
  walk(dir)
  return files.sort()
}

const toolVersion = (name) => {
  try {
    return JSON.parse(readFileSync(join('node_modules', name, 'package.json'), 'utf8')).version
  } catch {
    return 'missing'
  }
}
const shared = ['tsup.package.ts', 'tsconfig.base.json']
  .map((file) => `${file}\0${readFileSync(file, 'utf8')}`)
  .concat(['tsup', 'typescript', 'esbuild'].map((tool) => `${tool}@${toolVersion(tool)}`))
  .join('\0')

const stamps = new Map()
const stampOf = (name) => {
  if (stamps.has(name)) return stamps.get(name)
  const { dir, manifest } = packages.get(name)
  const hash = createHash('sha256').update(shared)
  for (const file of inputFiles(dir)) {
    hash.update(`\0${relative(dir, file)}\0`)
    hash.update(readFileSync(file))
  }
  for (const dep of repoDeps(manifest).sort()) hash.update(`\0${dep}\0${stampOf(dep)}`)
  const stamp = hash.digest('hex')
  stamps.set(name, stamp)
  return stamp
}

const stampFile = (name) => join(cacheDir, `${name.replace('/', '+')}.stamp`)
const upToDate = (name) => {
  const dist = join(packages.get(name).dir, 'dist')
  if (force || !existsSync(dist) || !statSync(dist).isDirectory()) return false
  if (readdirSync(dist).length === 0) return false
  try {
    return readFileSync(stampFile(name), 'utf8') === stampOf(name)
  } catch {
    return false
  }
}

const runBuild = (name) =>
  new Promise((resolve, reject) => {
    const started = Date.now()
    const child = spawn('npm', ['run', 'build', '--silent', '-w', name], {
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    child.on('error', reject)
    child.on('close', (code) => {
      if (code !== 0) {
        process.stderr.write(stderr)
        reject(new Error(`build of ${name} failed (exit ${code})`))
        return
      }
      mkdirSync(cacheDir, { recursive: true })
      writeFileSync(stampFile(name), stampOf(name))
      process.stdout.write(`built ${name} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`)
      resolve()
    })
  })

const started = Date.now()
const todo = new Set([...packages.keys()].filter((name) => !upToDate(name)))
if (todo.size === 0) {
  process.stdout.write(`build: all ${packages.size} packages up to date\n`)
  process.exit(0)
}
if (dryRun) {
  const order = []
  const visit = (name) => {
    if (order.includes(name) || !todo.has(name)) return
    for (const dep of repoDeps(packages.get(name).manifest)) visit(dep)
    order.push(name)
  }
  for (const name of todo) visit(name)
  process.stdout.write(`build: would build ${order.join(' ')}\n`)
  process.exit(0)
}
const skipped = packages.size - todo.size
if (skipped > 0)
  process.stdout.write(`build: ${skipped} packages up to date, ${todo.size} to build\n`)

// A package starts once none of its repo dependencies is still to build or building.
const limit = Math.max(1, Math.min(availableParallelism(), 4))
const running = new Set()
const ready = (name) => repoDeps(packages.get(name).manifest).every((dep) => !todo.has(dep))
await new Promise((resolve, reject) => {
  const pump = () => {
    if (todo.size === 0 && running.size === 0) return resolve()
    for (const name of todo) {
      if (running.size >= limit) break
      if (running.has(name) || !ready(name)) continue
      running.add(name)
      runBuild(name).then(() => {
        running.delete(name)
        todo.delete(name)
        pump()
      }, reject)
    }
  }
  pump()
})
process.stdout.write(`build: done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`)

// `npm run pack`: one installable tarball per published package, written to
// packed/ (or --out DIR), then the `npm install` line for each package: its own
// tarball and those of the packages it depends on from this repo, which npm
// cannot fetch from the registry before they are published.
import { execFileSync } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'

const args = process.argv.slice(2)
const outIndex = args.indexOf('--out')
const out = resolve(outIndex === -1 ? 'packed' : (args[outIndex + 1] ?? ''))
if (outIndex !== -1 && !args[outIndex + 1]) {
  process.stderr.write('pack: --out needs a directory\n')
  process.exit(2)
}

const root = JSON.parse(readFileSync('package.json', 'utf8'))
const packages = new Map()
for (const dir of root.workspaces.filter((w) => w.startsWith('packages/'))) {
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  if (!manifest.private) packages.set(manifest.name, { dir, manifest })
}

mkdirSync(out, { recursive: true })
for (const file of readdirSync(out)) if (file.endsWith('.tgz')) rmSync(join(out, file))

const tarball = new Map()
for (const [name, { dir }] of packages) {
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--pack-destination', out], {
      cwd: dir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  )
  tarball.set(name, join(out, packed.filename))
}

/** The package and every package of this repo it needs at run time, itself first. */
const closure = (name, seen = new Set()) => {
  if (seen.has(name)) return seen
  seen.add(name)
  for (const dep of Object.keys(packages.get(name).manifest.dependencies ?? {})) {
    if (packages.has(dep)) closure(dep, seen)
  }
  return seen
}

process.stdout.write(
  `${tarball.size} tarballs in ${out}\n\nTo install one into an app outside this repo:\n`,
)
for (const name of packages.keys()) {
  const { manifest } = packages.get(name)
  const files = [...closure(name)].map((dep) => tarball.get(dep)).join(' ')
  const global = manifest.bin ? ' -g' : ''
  process.stdout.write(`  ${name.padEnd(28)} npm install${global} ${files}\n`)
}

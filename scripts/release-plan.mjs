// What `npm run release` decides before it runs anything: its options, the
// packages it publishes, their publishing order, and the one command that
// finishes a release stopped part way. Pure functions over the checkout's
// manifests, so tests import them (scripts/release.mjs runs them).
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

export const PUBLIC_REGISTRY = 'https://registry.npmjs.org/'

/** At most this many `npm publish` at once, within one dependency wave. */
export const PUBLISH_PARALLEL = 4

const FLAGS = new Set([
  '--dry-run',
  '--no-version',
  '--no-build',
  '--no-checks',
  '--skip-published',
])
const VALUED = new Set(['--registry', '--tag', '--out'])

/**
 * `argv` (after `release.mjs`) as options, or `{ error }`: one line naming the
 * mistake and the usual cause.
 */
export function parseReleaseArgs(argv) {
  const options = {
    registry: PUBLIC_REGISTRY,
    tag: 'latest',
    out: undefined,
    dryRun: false,
    version: true,
    build: true,
    checks: true,
    skipPublished: false,
  }
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s, 2)
    if (FLAGS.has(flag) && inline === undefined) {
      if (flag === '--dry-run') options.dryRun = true
      else if (flag === '--skip-published') options.skipPublished = true
      else options[flag.slice(5)] = false
      continue
    }
    if (!VALUED.has(flag)) {
      return { error: `unknown option ${argv[i]} (options: ${[...FLAGS, ...VALUED].join(', ')})` }
    }
    const value = inline ?? argv[++i]
    if (value === undefined || value === '' || value.startsWith('--')) {
      return { error: `${flag} needs a value` }
    }
    if (flag === '--registry') {
      const registry = normalizeRegistry(value)
      if (!registry) return { error: `--registry ${value} is not an http(s) URL` }
      options.registry = registry
    } else if (flag === '--tag') {
      if (!/^[a-z][a-z0-9._-]*$/i.test(value) || /^v?\d/.test(value)) {
        return { error: `--tag ${value} is not a dist-tag (a word such as next or beta)` }
      }
      options.tag = value
    } else options.out = value
  }
  return { options }
}

/** `url` with one trailing slash, or undefined when it is not http(s). */
export function normalizeRegistry(url) {
  try {
    const parsed = new URL(url)
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined
    return `${parsed.href.replace(/\/+$/, '')}/`
  } catch {
    return undefined
  }
}

/** The registry as a user reads it: its origin and path, never a user or password in it. */
export function showRegistry(registry) {
  const parsed = new URL(registry)
  parsed.username = ''
  parsed.password = ''
  return parsed.href
}

/** The published packages of the checkout at `root`: name, version, folder, manifest. */
export function readPackages(root) {
  const workspaces = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).workspaces
  const packages = []
  for (const dir of workspaces.filter((w) => w.startsWith('packages/'))) {
    const file = join(root, dir, 'package.json')
    if (!existsSync(file)) continue
    const manifest = JSON.parse(readFileSync(file, 'utf8'))
    if (manifest.private) continue
    packages.push({ name: manifest.name, version: manifest.version, dir, manifest })
  }
  return packages
}

/** The repository packages `manifest` needs installed or may load: dependencies and peers. */
const repoNeeds = (manifest, names) =>
  Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies }).filter((dep) =>
    names.has(dep),
  )

/**
 * The packages in publishing waves: each wave's packages need only packages of
 * earlier waves, so a package is in the registry before anything that installs it.
 */
export function publishWaves(packages) {
  const names = new Set(packages.map((pkg) => pkg.name))
  const needs = new Map(packages.map((pkg) => [pkg.name, repoNeeds(pkg.manifest, names)]))
  const done = new Set()
  const waves = []
  while (done.size < packages.length) {
    const wave = packages
      .map((pkg) => pkg.name)
      .filter((name) => !done.has(name) && needs.get(name).every((dep) => done.has(dep)))
    if (wave.length === 0) {
      const left = packages.map((pkg) => pkg.name).filter((name) => !done.has(name))
      throw new Error(`the packages need each other in a cycle: ${left.join(', ')}`)
    }
    for (const name of wave) done.add(name)
    waves.push(wave)
  }
  return waves
}

/** The changesets waiting for a version step: `.changeset/*.md` but its README. */
export function pendingChangesets(root) {
  const dir = join(root, '.changeset')
  if (!existsSync(dir)) return []
  return readdirSync(dir)
    .filter((file) => file.endsWith('.md') && file !== 'README.md')
    .sort()
}

/** The one command that publishes what a stopped release left, nothing twice. */
export function finishCommand(options) {
  const registry =
    options.registry === PUBLIC_REGISTRY ? '' : ` --registry ${showRegistry(options.registry)}`
  const tag = options.tag === 'latest' ? '' : ` --tag ${options.tag}`
  return `npm run release --${registry}${tag} --no-version --skip-published`
}

/** `a, b and 3 more`: names for one line. */
export function nameList(names, shown = 6) {
  if (names.length === 0) return 'none'
  const head = names.slice(0, shown).join(', ')
  return names.length > shown ? `${head} and ${names.length - shown} more` : head
}

// `npm run release`: the one way the packages leave the repository.
//   1. changesets' version step, when changesets are pending (`--no-version` skips it;
//      `--dry-run` shows it without writing);
//   2. the build (`--no-build` skips it);
//   3. the package checks: publint, arethetypeswrong, `check:packages` (`--no-checks`);
//   4. one `npm pack` per package, into a temporary folder (or `--out DIR`);
//   5. a version already in the registry is refused, in one line, before anything
//      is published (`--skip-published` leaves those out instead);
//   6. those tarballs, the bytes just checked, are published in dependency order to
//      `--registry URL` (default the public npm registry), `--access public`, with
//      provenance when CI gives an OIDC token. `--dry-run` stops before this step.
// A failure part way names what was published and the command that finishes the rest.
import { execFile, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import {
  finishCommand,
  nameList,
  PUBLISH_PARALLEL,
  parseReleaseArgs,
  pendingChangesets,
  publishWaves,
  readPackages,
  showRegistry,
} from './release-plan.mjs'

const exec = promisify(execFile)
const root = process.cwd()
const say = (line) => process.stdout.write(`${line}\n`)

/** Ends the release with one line on stderr and exit code `code`. */
function fail(line, code = 1) {
  process.stderr.write(`release: ${line}\n`)
  process.exit(code)
}

/** Runs a step with its output shown; a failed step ends the release with its name. */
function step(name, command, args) {
  say(`release: ${name}`)
  return new Promise((done) => {
    const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] })
    child.on('exit', (code) => {
      if (code === 0) done()
      else fail(`${name} failed (exit ${code}); nothing was published`)
    })
  })
}

async function versionStep(options) {
  const pending = pendingChangesets(root)
  if (!options.version || pending.length === 0) {
    say(
      `release: version step skipped (${options.version ? 'no changesets pending' : '--no-version'})`,
    )
    return
  }
  if (options.dryRun) {
    await step(`version step, shown only (dry run): ${pending.length} changesets`, 'npx', [
      'changeset',
      'status',
      '--verbose',
    ])
    return
  }
  await step(`version step: ${pending.length} changesets`, 'npx', ['changeset', 'version'])
  if (existsSync(join(root, 'package-lock.json'))) {
    await step('lockfile, to the new versions', 'npm', [
      'install',
      '--package-lock-only',
      '--ignore-scripts',
      '--no-audit',
      '--no-fund',
    ])
    await step('lockfile, other platforms', process.execPath, ['scripts/complete-lockfile.mjs'])
  }
}

/** `npm pack` of every package into `out`: name to tarball path. */
async function packAll(packages, out) {
  mkdirSync(out, { recursive: true })
  const { stdout } = await exec(
    'npm',
    ['pack', '--json', '--pack-destination', out, ...packages.map((pkg) => `./${pkg.dir}`)],
    { cwd: root, maxBuffer: 64 * 1024 * 1024 },
  )
  const packed = JSON.parse(stdout)
  return new Map(packed.map((entry) => [entry.name, join(out, entry.filename)]))
}

/** Whether `name@version` is in the registry (npm view answers E404 when not). */
async function inRegistry(name, version, registry) {
  try {
    const { stdout } = await exec('npm', [
      'view',
      `${name}@${version}`,
      'version',
      '--json',
      '--registry',
      registry,
    ])
    return stdout.trim() !== ''
  } catch (error) {
    if (/E404|404 Not Found|is not in this registry/.test(`${error.stderr}${error.stdout}`)) {
      return false
    }
    const why = `${error.stderr}`.split('\n').find((line) => /npm error/.test(line)) ?? ''
    fail(
      `could not ask ${showRegistry(registry)} for ${name}@${version}: ${why.replace(/^npm error\s*/, '')} (is the registry running and reachable?)`,
    )
  }
}

/** Runs `task` over `items`, at most `limit` at once; resolves with each result. */
async function limited(items, limit, task) {
  const results = new Array(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const index = next++
      results[index] = await task(items[index])
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return results
}

/** Provenance only where npm can prove it: CI with an OIDC token (GitHub Actions). */
const provenance = () =>
  process.env.CI === 'true' && Boolean(process.env.ACTIONS_ID_TOKEN_REQUEST_URL)

async function publishOne(name, tarball, options) {
  const args = ['publish', tarball, '--registry', options.registry, '--access', 'public']
  args.push('--tag', options.tag)
  if (provenance()) args.push('--provenance')
  try {
    await exec('npm', args, { cwd: root, maxBuffer: 16 * 1024 * 1024 })
    return { name, ok: true }
  } catch (error) {
    const lines = `${error.stderr}`.split('\n').filter((line) => /npm error/.test(line))
    const why = (lines.find((line) => !/code E|A complete log/.test(line)) ?? lines[0] ?? '')
      .replace(/^npm error\s*/, '')
      .trim()
    return { name, ok: false, why: why || `npm publish exited ${error.code}` }
  }
}

async function publishAll(packages, tarballs, skipped, options) {
  const published = []
  for (const wave of publishWaves(packages)) {
    const todo = wave.filter((name) => !skipped.has(name))
    const results = await limited(todo, PUBLISH_PARALLEL, (name) =>
      publishOne(name, tarballs.get(name), options),
    )
    for (const result of results) if (result.ok) published.push(result.name)
    const failed = results.filter((result) => !result.ok)
    if (failed.length > 0) {
      const left = packages
        .map((pkg) => pkg.name)
        .filter((name) => !published.includes(name) && !skipped.has(name))
      process.stderr.write(
        `release: ${failed.map((f) => `${f.name} failed: ${f.why}`).join('; ')}\n` +
          `release: published ${published.length} of ${packages.length - skipped.size}: ${nameList(published)}; not published: ${nameList(left)}\n` +
          `release: to finish the rest: ${finishCommand(options)}\n`,
      )
      process.exit(1)
    }
  }
  return published
}

async function main() {
  const parsed = parseReleaseArgs(process.argv.slice(2))
  if (parsed.error)
    fail(`${parsed.error}; usage: npm run release -- [--registry URL] [--dry-run]`, 2)
  const { options } = parsed
  await versionStep(options)
  if (options.build) await step('build', 'npm', ['run', 'build', '--silent'])
  if (options.checks) await step('package checks', 'npm', ['run', 'check:packages', '--silent'])

  const packages = readPackages(root)
  const out = options.out ? resolve(options.out) : mkdtempSync(join(tmpdir(), 'aw-release-'))
  if (!options.out) process.on('exit', () => rmSync(out, { recursive: true, force: true }))
  say(`release: packing ${packages.length} packages`)
  const tarballs = await packAll(packages, out)
  say(`release: packed ${tarballs.size} packages into ${out}`)

  const present = await limited(packages, 6, (pkg) =>
    inRegistry(pkg.name, pkg.version, options.registry),
  )
  const already = packages.filter((_, index) => present[index])
  if (already.length > 0 && !options.skipPublished) {
    const first = already[0]
    fail(
      `${first.name}@${first.version} is already in ${showRegistry(options.registry)}` +
        `${already.length > 1 ? ` (and ${already.length - 1} more)` : ''}; a version is published once: add a changeset and run the version step for a new one`,
    )
  }
  const skipped = new Set(already.map((pkg) => pkg.name))
  const target = `${showRegistry(options.registry)} (tag ${options.tag})`
  const version = [...new Set(packages.map((pkg) => pkg.version))].join(', ')
  if (options.dryRun) {
    const unwritten =
      options.version && pendingChangesets(root).length > 0
        ? ' (the versions before the version step, which a dry run shows but does not write)'
        : ''
    say(
      `release: dry run: would publish ${packages.length - skipped.size} packages at ${version}${unwritten} to ${target}; published nothing`,
    )
    for (const wave of publishWaves(packages)) {
      const names = wave.filter((name) => !skipped.has(name))
      if (names.length > 0) say(`  ${names.join(' ')}`)
    }
    return
  }
  say(`release: publishing ${packages.length - skipped.size} packages at ${version} to ${target}`)
  const published = await publishAll(packages, tarballs, skipped, options)
  say(
    `release: published ${published.length} packages at ${version} to ${target}` +
      `${skipped.size > 0 ? `; ${skipped.size} already there, left as they were` : ''}`,
  )
}

await main()

/**
 * scripts/build.mjs skips a package whose inputs have not changed since its last
 * build, and builds what changed in dependency order. npm test has just built
 * everything, so the repository's own stamps say "up to date".
 */
import { execFile } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, expect, it } from 'vitest'

const run = promisify(execFile)
const root = new URL('../..', import.meta.url).pathname
const stamps = join(root, 'node_modules/.cache/affiliate-webhooks-build')
// Every workspace package with a build script: the count the build reports.
const built = (
  JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).workspaces as string[]
).filter((dir) => {
  const manifest = join(root, dir, 'package.json')
  return (
    dir.startsWith('packages/') &&
    existsSync(manifest) &&
    JSON.parse(readFileSync(manifest, 'utf8')).scripts?.build !== undefined
  )
}).length
const temp = mkdtempSync(join(tmpdir(), 'aw-build-cache-'))
afterAll(() => rmSync(temp, { recursive: true, force: true }))

const dryRun = async (cache: string, ...flags: string[]) => {
  const { stdout } = await run(process.execPath, ['scripts/build.mjs', '--dry-run', ...flags], {
    cwd: root,
    env: { ...process.env, AW_BUILD_CACHE: cache },
  })
  return stdout.trim()
}

it('builds nothing when no input changed since the last build', async () => {
  expect(built).toBeGreaterThan(10)
  expect(await dryRun(stamps)).toBe(`build: all ${built} packages up to date`)
})

it('rebuilds only the package whose stamp no longer matches', async () => {
  const cache = join(temp, 'one-stale')
  cpSync(stamps, cache, { recursive: true })
  writeFileSync(join(cache, '@affiliate-webhooks+core.stamp'), 'an older build')
  expect(await dryRun(cache)).toBe('build: would build @affiliate-webhooks/core')
})

it('with no stamps (a fresh clone) builds every package, each after the packages it imports', async () => {
  const line = await dryRun(join(temp, 'empty'))
  const order = line.replace('build: would build ', '').split(' ')
  expect(order).toHaveLength(built)
  const before = (a: string, b: string) =>
    order.indexOf(`@affiliate-webhooks/${a}`) < order.indexOf(`@affiliate-webhooks/${b}`)
  expect(before('core', 'express')).toBe(true)
  expect(before('client', 'emulator')).toBe(true)
  expect(before('emulator', 'cli')).toBe(true)
  expect(before('bullmq', 'cli')).toBe(true)
})

it('--force rebuilds everything even when the stamps match', async () => {
  expect(await dryRun(stamps, '--force')).toMatch(
    new RegExp(`^build: would build (@affiliate-webhooks/\\S+ ?){${built}}$`),
  )
})

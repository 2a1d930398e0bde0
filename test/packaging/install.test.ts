/**
 * The README's Install section, run as written in folders outside the repository,
 * against the run's local registry (`npm run registry`: every package published by
 * the release path). The app's scope line is the README's own, with the test's
 * port; the registry packages (express, next, prisma) come from the npm registry.
 * Then the installed CLI delivers a signed conversion to the installed Express app.
 */
import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { INSTALL_PROBLEM, lockedVersion } from '../stacks/copied-example.js'
import { sharedRegistry } from '../support/shared-registry.js'

const exec = promisify(execFile)
const root = new URL('../..', import.meta.url).pathname
const SECRET = 'whsec_install_test'
const README_REGISTRY = 'http://127.0.0.1:4873/'
const version = JSON.parse(readFileSync(join(root, 'packages/core/package.json'), 'utf8')).version

/** The shell lines of the README block that follows `<!-- tested: NAME ... -->`. */
function readmeBlock(name: string): string[] {
  const readme = readFileSync(join(root, 'README.md'), 'utf8')
  const match = new RegExp(`<!-- tested: ${name}\\b[^>]*-->\\s*\`\`\`sh\\n([\\s\\S]*?)\`\`\``).exec(
    readme,
  )
  if (!match?.[1]) throw new Error(`README.md has no block marked "tested: ${name}"`)
  return match[1]
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
}

let work: string
let registry: string
let globalPrefix: string
/** PATH as a user's shell has it: the project's Node first, nothing of this repository's bins. */
let userPath: string

/** The environment of a user's shell: none of the repository's npm script variables. */
function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: Record<string, string | undefined> = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (name.startsWith('npm_') && name !== 'npm_config_cache') continue
    if (name === 'INIT_CWD' || name === 'AFFILIATE_WEBHOOK_SECRET') continue
    env[name] = value
  }
  return {
    ...env,
    PATH: userPath,
    npm_config_prefix: globalPrefix,
    ...extra,
  } as unknown as NodeJS.ProcessEnv
}

/** Runs one README line in `cwd`; rejects with its output; fails on a peer or engine warning. */
async function sh(line: string, cwd: string, extra: Record<string, string> = {}) {
  const result = await exec('bash', ['-c', line], {
    cwd,
    env: userEnv(extra),
    maxBuffer: 32 * 1024 * 1024,
  }).catch((error: { stdout: string; stderr: string; message: string }) => {
    throw new Error(`\`${line}\` failed: ${error.message}\n${error.stdout}\n${error.stderr}`)
  })
  const problems = `${result.stdout}\n${result.stderr}`
    .split('\n')
    .filter((text) => INSTALL_PROBLEM.test(text))
  if (problems.length > 0) throw new Error(`\`${line}\` warned:\n${problems.join('\n')}`)
  return result
}

/** A new app folder whose scope points at the registry through the README's own line. */
async function newApp(name: string, manifest: Record<string, unknown> = {}): Promise<string> {
  const app = join(work, name)
  mkdirSync(app)
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name, private: true, type: 'module', ...manifest }, null, 2),
  )
  const [, scopeLine] = readmeBlock('install-local-registry')
  expect(scopeLine).toContain(README_REGISTRY)
  await sh((scopeLine as string).replace(README_REGISTRY, registry), app)
  return app
}

/** Runs every line of the README block in the app. */
async function runBlock(name: string, app: string): Promise<void> {
  for (const line of readmeBlock(name)) await sh(line, app)
}

const installed = (app: string, name: string) =>
  JSON.parse(readFileSync(join(app, 'node_modules', name, 'package.json'), 'utf8')).version

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'aw-install-'))
  globalPrefix = join(work, 'global')
  const nodeDir = join(work, 'node-bin')
  mkdirSync(nodeDir)
  symlinkSync(process.execPath, join(nodeDir, 'node'))
  const repoBins = (entry: string) => entry.startsWith(root) || entry.includes('node_modules')
  userPath = [
    nodeDir,
    ...(process.env.PATH ?? '').split(':').filter((entry) => !repoBins(entry)),
  ].join(':')
  registry = await sharedRegistry()
}, 180_000)

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true })
})

describe('README Install, by name from a local registry, outside the repository', () => {
  it('the registry line writes the scope, and only the scope, into the app .npmrc', async () => {
    const app = await newApp('scope-only')
    expect(readFileSync(join(app, '.npmrc'), 'utf8').trim()).toBe(
      `@affiliate-webhooks:registry=${registry}`,
    )
    expect(readmeBlock('install-local-registry')[0]).toBe('npm ci && npm run registry')
  })

  it('Express: the one line installs the adapter, the core and express', async () => {
    const app = await newApp('express-app')
    await runBlock('install-express', app)
    const manifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8'))
    expect(Object.keys(manifest.dependencies).sort()).toEqual([
      '@affiliate-webhooks/express',
      'express',
    ])
    expect(installed(app, '@affiliate-webhooks/core')).toBe(version)
    expect(installed(app, '@affiliate-webhooks/node')).toBe(version)
  }, 180_000)

  it('Next.js with Prisma: the line installs into a create-next-app app, and both load', async () => {
    const pinned = Object.fromEntries(
      ['next', 'react', 'react-dom'].map((name) => [name, lockedVersion('next', name)]),
    )
    const app = await newApp('next-prisma-app', { dependencies: pinned })
    await runBlock('install-next-prisma', app)
    expect(installed(app, '@affiliate-webhooks/next')).toBe(version)
    expect(installed(app, '@affiliate-webhooks/prisma')).toBe(version)
    expect(installed(app, '@affiliate-webhooks/postgres')).toBe(version)
    // A Postgres app installs the Postgres store only (issue 49: it used to bring MySQL's too).
    expect(existsSync(join(app, 'node_modules/@affiliate-webhooks/mysql'))).toBe(false)
    expect(existsSync(join(app, 'node_modules/mysql2'))).toBe(false)
    const { stdout } = await sh(
      `node --input-type=module -e "const n = await import('@affiliate-webhooks/next'); const p = await import('@affiliate-webhooks/prisma'); console.log(typeof n.affiliateWebhook, typeof p.prismaStore)"`,
      app,
    )
    expect(stdout.trim()).toBe('function function')
  }, 300_000)

  it('SQLite: the line installs, and a store on node:sqlite makes its tables', async () => {
    const app = await newApp('sqlite-app')
    await runBlock('install-sqlite', app)
    writeFileSync(
      join(app, 'check.js'),
      `import { DatabaseSync } from 'node:sqlite'
import { sqliteStore } from '@affiliate-webhooks/sqlite'
const store = sqliteStore({ database: new DatabaseSync(':memory:') })
await store.ready()
console.log('ready')
`,
    )
    const { stdout } = await sh('node check.js', app)
    expect(stdout.trim()).toBe('ready')
  }, 180_000)

  it('the CLI: npx runs it by name, the global install puts it on PATH', async () => {
    const app = await newApp('cli-app')
    const [npx, global, help] = readmeBlock('install-cli')
    const path = `${join(globalPrefix, 'bin')}:${userPath}`
    // npx asks before it installs; a user answers y (npm_config_yes answers it here).
    expect((await sh(npx as string, app, { npm_config_yes: 'true' })).stdout.trim()).toBe(version)
    // A global install reads the user's config, not the app's: the same scope line, for it.
    await sh(`${global} --@affiliate-webhooks:registry=${registry} --no-audit --no-fund`, app)
    const { stdout } = await sh(help as string, app, { PATH: path })
    expect(stdout).toMatch(/^Usage: affiliate-webhooks <command>/)
  }, 180_000)

  it('the CLI installed alone, with an empty npm cache: no store driver, at most 25 packages and 10 MB, one copy of each', async () => {
    const alone = await newApp('cli-alone')
    await sh('npm install --no-audit --no-fund @affiliate-webhooks/cli', alone, {
      npm_config_cache: join(work, 'empty-cache'),
    })
    const lock = JSON.parse(readFileSync(join(alone, 'node_modules/.package-lock.json'), 'utf8'))
    const paths = Object.keys(lock.packages as Record<string, unknown>).filter(Boolean)
    const names = paths.map((path) => path.slice(path.lastIndexOf('node_modules/') + 13))
    for (const driver of ['pg', 'mysql2', 'ioredis', 'bullmq']) expect(names).not.toContain(driver)
    expect(names.length, names.join(' ')).toBeLessThanOrEqual(25)
    expect(new Set(names).size, 'one copy of each').toBe(names.length)
    const { stdout } = await sh('du -sk node_modules', alone)
    const megabytes = Number(stdout.split('\t')[0]) / 1024
    expect(megabytes).toBeLessThanOrEqual(10)
    // A store command without its optional package: one line naming what to install.
    const bin = join(alone, 'node_modules/.bin/affiliate-webhooks')
    const missing = await exec(bin, ['sql', 'schema', '--postgres'], { cwd: alone }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    )
    expect(missing.code).toBe(2)
    expect(missing.stderr).toBe(
      'affiliate-webhooks sql: --postgres needs @affiliate-webhooks/postgres and pg, which are not installed: npm install @affiliate-webhooks/postgres pg\n',
    )
  }, 180_000)

  it('the installed CLI delivers a signed conversion to the installed Express app', async () => {
    const app = join(work, 'express-app')
    writeFileSync(
      join(app, 'server.js'),
      `import express from 'express'
import { affiliateWebhook } from '@affiliate-webhooks/express'
const app = express()
app.post('/hooks', affiliateWebhook({ secret: process.env.AFFILIATE_WEBHOOK_SECRET, onConversion(conversion) {
  console.log('handled', conversion.id, conversion.status)
} }))
const server = app.listen(0, '127.0.0.1', () => console.log('port', server.address().port))
`,
    )
    const server = spawn('node', ['server.js'], {
      cwd: app,
      env: userEnv({ AFFILIATE_WEBHOOK_SECRET: SECRET }),
    })
    try {
      let output = ''
      server.stdout.setEncoding('utf8').on('data', (text: string) => {
        output += text
      })
      while (!/port \d+/.test(output)) await once(server.stdout, 'data')
      const port = /port (\d+)/.exec(output)?.[1]
      const { stdout } = await sh(
        `affiliate-webhooks send --url http://127.0.0.1:${port}/hooks --status approved --conversion-id 4242`,
        work,
        {
          PATH: `${join(globalPrefix, 'bin')}:${userPath}`,
          AFFILIATE_WEBHOOK_SECRET: SECRET,
        },
      )
      expect(stdout).toMatch(/200/)
      while (!output.includes('handled')) await once(server.stdout, 'data')
      expect(output).toContain('handled 4242 approved')
    } finally {
      server.kill()
    }
  }, 60_000)
})

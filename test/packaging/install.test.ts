/**
 * The README's Install section, run as written in a temporary app outside this
 * repository: `npm run pack`'s tarballs, the express app's one `npm install`
 * line, the CLI's global install, and then the two talking to each other. The
 * registry packages (express) come from the registry, not from a warm cache.
 */
import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const exec = promisify(execFile)
const root = new URL('../..', import.meta.url).pathname
const SECRET = 'whsec_install_test'

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
let aw: string
let app: string
let globalPrefix: string
let packOutput: string

const sh = (line: string, cwd: string, env: Record<string, string> = {}) =>
  exec('bash', ['-c', line], {
    cwd,
    env: { ...process.env, AW: aw, ...env },
    maxBuffer: 16 * 1024 * 1024,
  }).catch((error: { stdout: string; stderr: string; message: string }) => {
    throw new Error(`\`${line}\` failed: ${error.message}\n${error.stdout}\n${error.stderr}`)
  })

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'aw-install-'))
  // Stands for the user's clone: `npm run pack` writes its packed/ there.
  aw = join(work, 'clone')
  app = join(work, 'app')
  globalPrefix = join(work, 'global')
  mkdirSync(app)
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'my-app', private: true, type: 'module' }),
  )
  ;({ stdout: packOutput } = await exec('node', ['scripts/pack.mjs', '--out', join(aw, 'packed')], {
    cwd: root,
  }))
}, 120_000)

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true })
})

describe('README Install, from the tarballs, outside the repository', () => {
  it('the README lines are the ones npm run pack prints', () => {
    const lines = [...readmeBlock('install-express'), ...readmeBlock('install-cli')]
    const printed = packOutput.replaceAll(aw, '$AW')
    const express = lines.find((line) => line.includes('affiliate-webhooks-express'))
    const cli = lines.find((line) => line.startsWith('npm install -g'))
    expect(express).toBeDefined()
    expect(printed).toContain(express?.replace('npm install express ', 'npm install '))
    expect(printed).toContain(cli)
  })

  it('installs express and the adapter into an app with the one README line', async () => {
    for (const line of readmeBlock('install-express')) {
      if (line.startsWith('npm ci') || line.startsWith('AW=')) continue // done by beforeAll
      await sh(line, app)
    }
    const installed = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8'))
    expect(Object.keys(installed.dependencies).sort()).toEqual([
      '@affiliate-webhooks/core',
      '@affiliate-webhooks/express',
      '@affiliate-webhooks/node',
      'express',
    ])
  }, 180_000)

  it('installs the CLI globally and runs it by name', async () => {
    const [install, help] = readmeBlock('install-cli')
    expect(install).toMatch(/^npm install -g /)
    await sh(install as string, work, { npm_config_prefix: globalPrefix })
    const { stdout } = await sh(help as string, work, {
      PATH: `${join(globalPrefix, 'bin')}:${process.env.PATH}`,
    })
    expect(stdout).toMatch(/^Usage: affiliate-webhooks <command>/)
  }, 120_000)

  it('the CLI installed alone, with an empty npm cache: no store driver, at most 25 packages and 10 MB, one copy of each', async () => {
    const [install] = readmeBlock('install-cli')
    const alone = join(work, 'cli-alone')
    mkdirSync(alone)
    writeFileSync(join(alone, 'package.json'), JSON.stringify({ name: 'alone', private: true }))
    // The README's global line, installed locally: the same tarballs, nothing else.
    const local = (install as string).replace(
      /^npm install -g /,
      'npm install --no-audit --no-fund ',
    )
    await sh(local, alone, { npm_config_cache: join(work, 'empty-cache') })
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
      env: { ...process.env, AFFILIATE_WEBHOOK_SECRET: SECRET },
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
          PATH: `${join(globalPrefix, 'bin')}:${process.env.PATH}`,
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

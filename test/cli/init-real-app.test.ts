/**
 * `init` on a real app, as a user runs it: an Express 5 app with
 * `app.use(express.json())` mounted globally and better-sqlite3, in a deep
 * temporary folder, its npm pointed at the run's local registry for the
 * `@affiliate-webhooks` scope. `init --yes` installs the packages by name with
 * npm, writes the store module and edits the app's file (the route before
 * express.json());
 * then the emulator, an endpoint, `trigger --wait`: the conversion is handled
 * and written once in the app's SQLite file, and a second `init` is up to date.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { lockedVersion, npmInstall } from '../stacks/copied-example.js'
import { CLI, killLive, startLoop } from '../support/cli-live.js'
import { freePort } from '../support/redis-servers.js'
import { run } from '../support/run-process.js'
import { pointScopeAt, sharedRegistry } from '../support/shared-registry.js'

const work = mkdtempSync(join(tmpdir(), 'aw-init-real-'))
const app = join(work, 'a', 'b', 'c', 'shop')
let server: ChildProcess | undefined
afterAll(async () => {
  if (server?.exitCode === null) {
    server.kill('SIGTERM')
    await once(server, 'exit')
  }
  killLive()
  rmSync(work, { recursive: true, force: true })
})

const APP_JS = `import Database from 'better-sqlite3'
import express from 'express'

const app = express()
app.use(express.json())
app.get('/conversions', (_req, res) => {
  const db = new Database(process.env.SQLITE_FILE || 'app.db')
  res.json(db.prepare("SELECT * FROM affiliate_conversions ORDER BY conversion_id").all())
  db.close()
})
app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => console.log('listening'))
`

const init = (...args: string[]) => run(process.execPath, [CLI, 'init', '--dir', app, ...args])

describe('init on an Express app with express.json() and better-sqlite3, installed from the registry', () => {
  it('installs by name, writes the module, and the app handles a conversion from the emulator once', async () => {
    mkdirSync(join(app, 'src'), { recursive: true })
    // better-sqlite3 at the repository's version: its package carries prebuilt
    // binaries for this Node (no build from source, no download).
    writeFileSync(
      join(app, 'package.json'),
      `${JSON.stringify({ name: 'shop', private: true, type: 'module', scripts: { start: 'node src/app.js' }, dependencies: { 'better-sqlite3': lockedVersion('express', 'better-sqlite3'), express: '^5.1.0' } }, null, 2)}\n`,
    )
    writeFileSync(join(app, 'src/app.js'), APP_JS)
    pointScopeAt(app, await sharedRegistry())
    await npmInstall(app, process.env)

    const started = performance.now()
    const first = await init('--yes', '--json')
    const initSeconds = (performance.now() - started) / 1000
    expect(first.code, first.stderr).toBe(0)
    const { plan, installed, applied } = JSON.parse(first.stdout)
    expect(installed).toBe(true)
    expect(applied.written).toEqual(['src/affiliate-webhooks.js', 'affiliate-webhooks-setup.mjs'])
    const manifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8'))
    for (const name of [
      '@affiliate-webhooks/express',
      '@affiliate-webhooks/sqlite',
      '@affiliate-webhooks/core',
    ]) {
      expect(manifest.dependencies[name], name).toBeDefined()
    }
    // init edited the app's file: the import on top, the route before express.json().
    expect(applied.edited).toEqual(['src/app.js'])
    expect(plan.edit.path).toBe('src/app.js')
    expect(readFileSync(join(app, 'src/app.js'), 'utf8')).toBe(
      APP_JS.replace(
        "import express from 'express'\n",
        "import express from 'express'\nimport { webhook } from './affiliate-webhooks.js'\n",
      ).replace('app.use(express.json())', "app.post('/hooks', webhook)\napp.use(express.json())"),
    )
    expect((await init('--yes')).stdout).toMatch(/^up to date/m)

    // The app's table, once, before any delivery: the setup step the plan names.
    const setup = await run(process.execPath, [join(app, 'affiliate-webhooks-setup.mjs')], {
      env: { SQLITE_FILE: join(app, 'app.db') },
    })
    expect(setup.stdout + setup.stderr).toBe('affiliate_conversions: ready\n')

    const { cli } = await startLoop()
    const port = await freePort()
    const made = await cli(
      'endpoints',
      'create',
      '--url',
      `http://127.0.0.1:${port}/hooks`,
      '--show-secret',
    )
    expect(made.code, made.stderr).toBe(0)
    const secret = /^export AFFILIATE_WEBHOOK_SECRET=(whsec_\S+)$/m.exec(made.stdout)?.[1] as string
    server = spawn(process.execPath, ['src/app.js'], {
      cwd: app,
      env: {
        ...process.env,
        PORT: String(port),
        AFFILIATE_WEBHOOK_SECRET: secret,
        SQLITE_FILE: join(app, 'app.db'),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    await new Promise<void>((resolve, reject) => {
      server?.stdout?.once('data', () => resolve())
      server?.once('exit', (code) => reject(new Error(`the app exited ${code} before it listened`)))
    })

    const triggered = await cli(
      'trigger',
      'conversion.created',
      '--conversion-id',
      '4242',
      '--commission',
      '4.20',
      '--currency',
      'EUR',
      '--wait',
      '--json',
    )
    expect(triggered.code, triggered.stderr).toBe(0)
    const rows = (await (await fetch(`http://127.0.0.1:${port}/conversions`)).json()) as {
      conversion_id: number
      status: string
      commission: string
    }[]
    expect(rows).toEqual([
      expect.objectContaining({
        conversion_id: 4242,
        status: 'pending',
        commission: '4.20',
        currency: 'EUR',
      }),
    ])
    console.log(
      `init on Express + SQLite: init --yes (with npm install from the local registry) ${initSeconds.toFixed(1)} s`,
    )
  }, 300_000)
})

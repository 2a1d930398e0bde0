/**
 * `affiliate-webhooks init` on a Next.js app made by its own creator, as a user
 * does it: `create-next-app` (App Router, TypeScript, src/), Prisma 7 added the
 * way Prisma's guide says (`npm install`, `prisma init --output`), then
 * `init --yes`, which installs this project's packages by name from the run's
 * local registry. The table the Prisma model describes is created with SQL
 * (`prisma migrate` runs Prisma's schema engine, a download this machine cannot
 * make); `prisma generate`, `next build`,
 * `next start`, the emulator, an endpoint, `trigger --wait`: the conversion is
 * written once in PostgreSQL through ctx.tx. The times of each step are printed.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { lockedVersion, root, run } from '../stacks/copied-example.js'
import { CLI, killLive, startLoop } from '../support/cli-live.js'
import { createPostgresTestDatabase, type TestDatabase } from '../support/postgres-db.js'
import { pointScopeAt, sharedRegistry } from '../support/shared-registry.js'
import { type ServedApp, serveApp, stepTimer } from '../support/starter-app.js'

const work = mkdtempSync(join(tmpdir(), 'aw-next-init-'))
const parent = join(work, 'a', 'b', 'c')
const app = join(parent, 'shop')
let db: TestDatabase | undefined
let server: ServedApp | undefined

afterAll(async () => {
  await server?.stop()
  killLive()
  await db?.drop()
  rmSync(work, { recursive: true, force: true })
})

const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
  const { AFFILIATE_WEBHOOK_SECRET: _s, DATABASE_URL: _d, NODE_ENV: _n, ...rest } = process.env
  return {
    ...rest,
    NEXT_TELEMETRY_DISABLED: '1',
    CHECKPOINT_DISABLE: '1',
    PRISMA_HIDE_UPDATE_MESSAGE: '1',
    // Prisma's CLI fetches its schema engine before it starts (and generate, init never run it).
    PRISMA_SCHEMA_ENGINE_BINARY: join(root, 'test/sql/prisma/no-schema-engine.mjs'),
    ...extra,
  } as unknown as NodeJS.ProcessEnv
}

/** `next start` on `port`, served once it answers. */
function start(extra: Record<string, string>): Promise<ServedApp> {
  const nextBin = join(app, 'node_modules/next/dist/bin/next')
  return serveApp(
    [process.execPath, nextBin, 'start', '--port', extra.PORT as string, '--hostname', '127.0.0.1'],
    app,
    env({ NODE_ENV: 'production', ...extra }),
    `http://127.0.0.1:${extra.PORT}`,
  )
}

describe('init on an app create-next-app made, with Prisma 7 on PostgreSQL', () => {
  it('creates, adds Prisma, init --yes, builds, and a conversion from the emulator lands once in PostgreSQL', async () => {
    mkdirSync(parent, { recursive: true })
    const { step: timed, line } = stepTimer()
    const version = lockedVersion('next', 'next')
    await timed('create-next-app', () =>
      run(
        [
          'npx',
          '--yes',
          `create-next-app@${version.replace(/\.\d+$/, '')}`,
          'shop',
          '--ts',
          '--app',
          '--src-dir',
          '--empty',
          '--use-npm',
          '--disable-git',
          '--yes',
          '--no-agent-feedback',
        ],
        parent,
        env(),
      ),
    )
    pointScopeAt(app, await sharedRegistry())
    const prisma = ['prisma', '@prisma/client', '@prisma/adapter-pg'].map(
      (name) => `${name}@${lockedVersion('next-prisma', name)}`,
    )
    await timed('add Prisma', async () => {
      await run(['npm', 'install', '--no-audit', '--no-fund', ...prisma.slice(1)], app, env())
      await run(
        ['npm', 'install', '--no-audit', '--no-fund', '--save-dev', prisma[0] as string],
        app,
        env(),
      )
      await run(
        [
          'npx',
          'prisma',
          'init',
          '--datasource-provider',
          'postgresql',
          '--output',
          '../src/generated/prisma',
        ],
        app,
        env(),
      )
    })

    const initRun = await timed('init --yes', () =>
      run([process.execPath, CLI, 'init', '--yes'], app, env()),
    )
    expect(initRun).toMatch(/^init: Next\.js \(App Router\)/m)
    expect(initRun).toMatch(/^ {6}store: Prisma \(@prisma\/client in package\.json\)$/m)
    expect(initRun).toMatch(/^installed @affiliate-webhooks\/next /m)
    const manifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8'))
    expect(manifest.dependencies['@affiliate-webhooks/prisma']).toBeDefined()
    expect(manifest.dependencies['@affiliate-webhooks/mysql']).toBeUndefined()
    expect(readFileSync(join(app, 'prisma/schema.prisma'), 'utf8')).toContain(
      'model AffiliateConversion',
    )

    // What `prisma migrate dev` would create for the model init added.
    db = await createPostgresTestDatabase()
    await db.pool.query(
      'CREATE TABLE affiliate_conversions (conversion_id bigint PRIMARY KEY, status text NOT NULL, commission decimal(12, 2), currency text, event_id text NOT NULL)',
    )
    await timed('prisma generate + next build', async () => {
      await run(['npx', 'prisma', 'generate'], app, env())
      // Not in a namespace without network: the starter's Tailwind runs PostCSS in a Node
      // process Turbopack reaches over loopback, which such a namespace has down.
      await run(['npx', 'next', 'build'], app, env())
    })

    const { cli } = await startLoop()
    const port = String(40_000 + Math.floor(Math.random() * 20_000))
    const made = await cli(
      'endpoints',
      'create',
      '--url',
      `http://127.0.0.1:${port}/api/hooks`,
      '--show-secret',
    )
    expect(made.code, made.stderr).toBe(0)
    const secret = /^export AFFILIATE_WEBHOOK_SECRET=(whsec_\S+)$/m.exec(made.stdout)?.[1] as string
    server = await start({ PORT: port, AFFILIATE_WEBHOOK_SECRET: secret, DATABASE_URL: db.url })
    const triggered = await cli(
      'trigger',
      'conversion.created',
      '--conversion-id',
      '5151',
      '--commission',
      '7.30',
      '--currency',
      'EUR',
      '--wait',
    )
    expect(triggered.code, triggered.stdout + triggered.stderr).toBe(0)
    const { rows } = await db.pool.query(
      'SELECT conversion_id::text AS id, status, commission::text AS commission, currency FROM affiliate_conversions',
    )
    expect(rows).toEqual([{ id: '5151', status: 'pending', commission: '7.30', currency: 'EUR' }])
    console.log(line('create-next-app + Prisma + init'))
  }, 600_000)
})

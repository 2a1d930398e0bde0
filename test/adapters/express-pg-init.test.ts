/**
 * `affiliate-webhooks init` on an Express 5 app on PostgreSQL through pg, as a
 * user runs it (issue 58): the app (test/cli/init-apps/express-pg: `npm start`
 * is `node src/app.js`, express.json() mounted globally) installed from the
 * npm registry, `init --yes` installing this project's packages by name from
 * the run's local registry. The app's own `npm start` with DATABASE_URL left
 * empty in .env stops with one line naming it; with the URL in .env,
 * `npm run affiliate-webhooks:setup` creates the app's table, and the app,
 * started by `npm start` with the secret only in .env, answers a first burst
 * of concurrent deliveries on the fresh database all `processed` at their
 * first attempt, then the emulator's delivery `processed` and its replay
 * `duplicate`. Each step's time is printed.
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import { afterAll, describe, expect, it } from 'vitest'
import { npmInstall, run } from '../stacks/copied-example.js'
import { CLI } from '../support/cli-live.js'
import { createPostgresTestDatabase, type TestDatabase } from '../support/postgres-db.js'
import { pointScopeAt, sharedRegistry } from '../support/shared-registry.js'
import {
  conversionHandledOnce,
  serveApp,
  starterEnv,
  starterWorkspace,
  stepTimer,
} from '../support/starter-app.js'

const { app, served } = starterWorkspace('express-pg')
let db: TestDatabase | undefined
afterAll(async () => {
  await served.app?.stop()
  await db?.drop()
})

/** Sets `name=value` in the app's .env, as the user does in an editor. */
function setEnv(name: string, value: string): void {
  const file = join(app, '.env')
  const text = readFileSync(file, 'utf8')
  writeFileSync(file, text.replace(new RegExp(`^${name}=.*$`, 'm'), `${name}=${value}`))
}

const BURST = 16

describe('init on an Express app on PostgreSQL (pg)', () => {
  it('init --yes, the table set up once, and the app by npm start with .env only: a first burst all processed, a delivery processed, its replay duplicate', async () => {
    const { step, line } = stepTimer()
    const env = starterEnv({ DATABASE_URL: '' })
    delete env.DATABASE_URL
    cpSync(new URL('../cli/init-apps/express-pg', import.meta.url).pathname, app, {
      recursive: true,
    })
    db = await createPostgresTestDatabase()
    pointScopeAt(app, await sharedRegistry(), true)
    await step('npm install', () => npmInstall(app, env))

    const initRun = await step('init --yes', () =>
      run([process.execPath, CLI, 'init', '--yes'], app, env),
    )
    expect(initRun).toMatch(/^init: Express \(express in package\.json\)$/m)
    expect(initRun).toMatch(/^ {6}store: PostgreSQL \(node-postgres\) \(pg in package\.json\)$/m)
    expect(initRun).toMatch(
      /^set package\.json scripts affiliate-webhooks:setup, start, dev as shown$/m,
    )
    expect(initRun).toMatch(/^ {2}npm run affiliate-webhooks:setup {3}# once/m)
    expect(initRun).toMatch(/^ {2}npm run dev$/m)
    expect(initRun).not.toMatch(/npx affiliate-webhooks/)

    // DATABASE_URL as init left it in .env (empty): the app's own start names it, in one line.
    const empty = await run(['npm', 'start'], app, env).catch((error: Error) => error.message)
    expect(empty).toMatch(
      /^Error: DATABASE_URL is not set: put it in \.env \(DATABASE_URL=\.\.\.\) or in the app's environment, then start the app again$/m,
    )
    expect(empty).not.toMatch(/Invalid URL/)

    setEnv('DATABASE_URL', db.url)
    const setup = await step('npm run affiliate-webhooks:setup', () =>
      run(['npm', 'run', 'affiliate-webhooks:setup'], app, env),
    )
    expect(setup).toMatch(/^affiliate_conversions: ready$/m)
    expect(setup).not.toContain(db.url)

    const rows = async (conversionId: string) =>
      Number(
        (
          await (db as TestDatabase).pool.query(
            'SELECT count(*) AS n FROM affiliate_conversions WHERE conversion_id = $1',
            [conversionId],
          )
        ).rows[0].n,
      )
    served.app = await step('npm start + a first burst + first verified event', () =>
      conversionHandledOnce(
        '/hooks',
        async (extra, base) => {
          setEnv('AFFILIATE_WEBHOOK_SECRET', extra.AFFILIATE_WEBHOOK_SECRET as string)
          const started = await serveApp(
            ['npm', 'start'],
            app,
            starterEnv({ PORT: extra.PORT as string, HOST: '127.0.0.1' }),
            base,
          )
          // The first deliveries the app ever gets, at once, on a database that has only the
          // app's table: each processed at its first attempt (no DDL racing in a delivery).
          const answers = await Promise.all(
            Array.from({ length: BURST }, async (_, index) => {
              const { headers, body } = await signedDelivery({
                secret: extra.AFFILIATE_WEBHOOK_SECRET as string,
                event: buildConversionEvent({ conversion: { id: 9_000 + index } }),
              })
              const response = await fetch(`${base}/hooks`, { method: 'POST', headers, body })
              return `${response.status} ${await response.text()}`
            }),
          )
          expect(answers, started.log()).toEqual(
            Array(BURST).fill('200 {"received":true,"outcome":"processed"}'),
          )
          return started
        },
        rows,
      ),
    )
    const written = await db.pool.query('SELECT count(*) AS n FROM affiliate_conversions')
    expect(Number(written.rows[0].n)).toBe(BURST + 1)
    console.log(line('Express + pg + init'))
  }, 600_000)
})

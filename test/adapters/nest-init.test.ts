/**
 * `affiliate-webhooks init` on a NestJS app made by its own creator, as a user
 * does it (issue 58): `nest new` (@nestjs/cli 12.0.15, pinned: Nest 12 on
 * Express 5, ESM), its dependencies from the npm registry, `init --yes`
 * installing this project's packages by name from the run's local registry.
 * Nest does not read .env: init makes the app's own start scripts load it
 * (`nest start --env-file .env`, `node --env-file-if-exists=.env dist/main`)
 * and names `npm run start:dev` to start it. Then `npm run build`, the app
 * started by `npm run start:prod` with the secret only in .env, the emulator,
 * an endpoint, `trigger --wait`: the conversion is processed, a replay of the
 * delivery is a duplicate, onConversion's line printed once. Each step's time
 * is printed.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { npmInstall, run } from '../stacks/copied-example.js'
import { CLI } from '../support/cli-live.js'
import { pointScopeAt, sharedRegistry } from '../support/shared-registry.js'
import {
  conversionHandledOnce,
  serveApp,
  starterEnv,
  starterWorkspace,
  stepTimer,
} from '../support/starter-app.js'

/** The creator, pinned: the template's dependency ranges are the ones this version writes. */
const NEST_CLI = '@nestjs/cli@12.0.15'

const { app, work, served } = starterWorkspace('nest')

describe('init on an app `nest new` made', () => {
  it('creates, init --yes, builds, and the app started by its own script with .env only handles a conversion once', async () => {
    const { step, line } = stepTimer()
    const env = starterEnv()
    await step('nest new', () =>
      run(
        [
          'npx',
          '--yes',
          NEST_CLI,
          'new',
          'shop',
          '--skip-install',
          '--skip-git',
          '--package-manager',
          'npm',
          '--no-interactive',
          '--skip-skills',
          '--no-observe',
        ],
        work,
        env,
      ),
    )
    pointScopeAt(app, await sharedRegistry(), true)
    await step('npm install', () => npmInstall(app, env))

    const initRun = await step('init --yes', () =>
      run([process.execPath, CLI, 'init', '--yes'], app, env),
    )
    expect(initRun).toMatch(/^init: NestJS \(@nestjs\/core in package\.json\)$/m)
    expect(initRun).toMatch(/^edited src\/main\.ts as shown$/m)
    expect(initRun).toMatch(/^ {2}npm run start:dev$/m)
    expect(initRun).not.toMatch(/npm run dev\b|npx affiliate-webhooks/)
    const scripts = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')).scripts
    expect(scripts['start:dev']).toBe('nest start --env-file .env --watch')
    expect(scripts['start:prod']).toBe('node --env-file-if-exists=.env dist/main')
    expect(await run([process.execPath, CLI, 'init', '--yes'], app, env)).toMatch(/^up to date/m)

    await step('npm run build', () => run(['npm', 'run', 'build'], app, env))
    served.app = await step('npm run start:prod + first verified event', () =>
      conversionHandledOnce('/hooks', (extra, base) => {
        // The secret only in .env, as the user puts it there.
        const file = join(app, '.env')
        writeFileSync(
          file,
          readFileSync(file, 'utf8').replace(
            /^AFFILIATE_WEBHOOK_SECRET=.*$/m,
            `AFFILIATE_WEBHOOK_SECRET=${extra.AFFILIATE_WEBHOOK_SECRET}`,
          ),
        )
        return serveApp(
          ['npm', 'run', 'start:prod'],
          app,
          starterEnv({ PORT: extra.PORT as string }),
          base,
        )
      }),
    )
    console.log(line(`nest new (${NEST_CLI}) + init`))
  }, 600_000)
})

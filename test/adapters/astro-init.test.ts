/**
 * `affiliate-webhooks init` on an Astro app, as a user does it. Not made by
 * create-astro: create-astro (5.2.4) first looks github.com up and then
 * downloads its templates from GitHub, which neither this machine nor CI
 * reaches (it stops at "Unable to connect to the internet."). The app is the one
 * Astro's manual-setup guide has a user write: a package.json with the astro
 * scripts, `npm install astro` (7.3.5, examples/astro's locked version), an
 * astro.config.mjs with an empty defineConfig, a page and the strict tsconfig;
 * then the Node adapter added the way Astro says, `astro add node --yes` (which
 * installs @astrojs/node from the npm registry and edits the config itself).
 * `init --yes` installs this project's packages by name from the run's local
 * registry; `npm run build` (astro build), `node dist/server/entry.mjs` with
 * HOST and PORT, the emulator, an endpoint, `trigger --wait`: the conversion is
 * processed, a replay of the delivery is a duplicate, onConversion's line
 * printed once. Each step's time is printed.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { lockedVersion, run } from '../stacks/copied-example.js'
import { CLI } from '../support/cli-live.js'
import { pointScopeAt, sharedRegistry } from '../support/shared-registry.js'
import {
  conversionHandledOnce,
  serveApp,
  starterEnv,
  starterWorkspace,
  stepTimer,
} from '../support/starter-app.js'

const { app, served } = starterWorkspace('astro')

/** What Astro's manual setup has a user write before `npm install astro`. */
function manualSetup(): void {
  mkdirSync(join(app, 'src/pages'), { recursive: true })
  const manifest = {
    name: 'shop',
    type: 'module',
    private: true,
    scripts: { dev: 'astro dev', build: 'astro build', preview: 'astro preview' },
  }
  writeFileSync(join(app, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`)
  writeFileSync(
    join(app, 'astro.config.mjs'),
    "import { defineConfig } from 'astro/config'\n\nexport default defineConfig({})\n",
  )
  writeFileSync(
    join(app, 'src/pages/index.astro'),
    '---\n---\n<html lang="en"><body><h1>Shop</h1></body></html>\n',
  )
  const tsconfig = {
    extends: 'astro/tsconfigs/strict',
    include: ['.astro/types.d.ts', '**/*'],
    exclude: ['dist'],
  }
  writeFileSync(join(app, 'tsconfig.json'), `${JSON.stringify(tsconfig, null, 2)}\n`)
}

describe('init on an Astro app set up by hand as Astro documents it, with astro add node', () => {
  it('init --yes, builds, and a conversion from the emulator is handled once', async () => {
    const { step, line } = stepTimer()
    const env = starterEnv()
    const astro = `astro@${lockedVersion('astro', 'astro')}`
    await step(`manual setup + npm install ${astro}`, async () => {
      manualSetup()
      pointScopeAt(app, await sharedRegistry())
      await run(['npm', 'install', '--no-audit', '--no-fund', astro], app, env)
    })
    await step('astro add node --yes', () =>
      run(['npx', 'astro', 'add', 'node', '--yes'], app, env),
    )
    expect(readFileSync(join(app, 'astro.config.mjs'), 'utf8')).toMatch(/adapter: node\(/)

    const initRun = await step('init --yes', () =>
      run([process.execPath, CLI, 'init', '--yes'], app, env),
    )
    expect(initRun).toMatch(/^init: Astro \(astro in package\.json\)$/m)
    expect(initRun).toMatch(/^ {6}store: memory \(one process\)/m)
    expect(initRun).toMatch(/^wrote src\/lib\/affiliate-webhooks\.ts, src\/pages\/hooks\.ts$/m)
    expect(initRun).toMatch(/^installed @affiliate-webhooks\/web @affiliate-webhooks\/core$/m)
    expect(await run([process.execPath, CLI, 'init', '--yes'], app, env)).toMatch(/^up to date/m)

    await step('npm run build', () => run(['npm', 'run', 'build'], app, env))
    served.app = await step('node dist/server/entry.mjs + first verified event', () =>
      conversionHandledOnce('/hooks', (extra, base) =>
        serveApp(
          [process.execPath, 'dist/server/entry.mjs'],
          app,
          starterEnv({ NODE_ENV: 'production', ...extra }),
          base,
        ),
      ),
    )
    console.log(line(`Astro manual setup (${astro}) + astro add node + init`))
  }, 600_000)
})

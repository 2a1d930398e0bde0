/**
 * `affiliate-webhooks init` on a Nuxt app, as a user does it. Not made by
 * create-nuxt: create-nuxt (3.37.0; `nuxi init` is the same code) downloads its
 * template list and templates from GitHub, which neither this machine nor CI
 * reaches ("Failed to download template from registry"). The app is the smallest
 * one Nuxt runs, written as the minimal template lays it out: a package.json with
 * the nuxt scripts (postinstall: nuxt prepare), nuxt.config.ts with a
 * compatibility date, app/app.vue, the tsconfig.json that points at .nuxt's, then
 * `npm install nuxt` (4.5.2, the repository's locked version) from the npm
 * registry. `init --yes` installs this project's packages by name from the run's
 * local registry; `npm run build` (nuxt build), `node .output/server/index.mjs`
 * with HOST and PORT, the emulator, an endpoint, `trigger --wait`: the conversion
 * is processed, a replay of the delivery is a duplicate, onConversion's line
 * printed once. Each step's time is printed.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
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

const { app, served } = starterWorkspace('nuxt')

/** The minimal Nuxt app: what the minimal template has, less its README and assets. */
function manualSetup(): void {
  mkdirSync(join(app, 'app'), { recursive: true })
  const manifest = {
    name: 'shop',
    type: 'module',
    private: true,
    scripts: {
      build: 'nuxt build',
      dev: 'nuxt dev',
      preview: 'nuxt preview',
      postinstall: 'nuxt prepare',
    },
  }
  writeFileSync(join(app, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`)
  writeFileSync(
    join(app, 'nuxt.config.ts'),
    "export default defineNuxtConfig({\n  compatibilityDate: '2026-11-01',\n})\n",
  )
  writeFileSync(join(app, 'app/app.vue'), '<template>\n  <h1>Shop</h1>\n</template>\n')
  const references = ['app', 'server', 'shared', 'node'].map((part) => ({
    path: `./.nuxt/tsconfig.${part}.json`,
  }))
  writeFileSync(
    join(app, 'tsconfig.json'),
    `${JSON.stringify({ files: [], references }, null, 2)}\n`,
  )
}

describe('init on a minimal Nuxt app', () => {
  it('init --yes, builds, and a conversion from the emulator is handled once', async () => {
    const { step, line } = stepTimer()
    const env = starterEnv()
    const nuxt = `nuxt@${lockedVersion('nuxt', 'nuxt')}`
    await step(`app files + npm install ${nuxt}`, async () => {
      manualSetup()
      pointScopeAt(app, await sharedRegistry())
      await run(['npm', 'install', '--no-audit', '--no-fund', nuxt], app, env)
    })

    const initRun = await step('init --yes', () =>
      run([process.execPath, CLI, 'init', '--yes'], app, env),
    )
    expect(initRun).toMatch(/^init: Nuxt \(nuxt in package\.json\)$/m)
    expect(initRun).toMatch(/^ {6}store: memory \(one process\)/m)
    expect(initRun).toMatch(/^ {6}npm, TypeScript, ESM; route \/hooks/m)
    expect(initRun).toMatch(
      /^wrote server\/utils\/affiliate-webhooks\.ts, server\/routes\/hooks\.post\.ts$/m,
    )
    expect(initRun).toMatch(/^installed @affiliate-webhooks\/h3 @affiliate-webhooks\/core$/m)
    expect(await run([process.execPath, CLI, 'init', '--yes'], app, env)).toMatch(/^up to date/m)

    await step('npm run build', () => run(['npm', 'run', 'build'], app, env))
    served.app = await step('node .output/server/index.mjs + first verified event', () =>
      conversionHandledOnce('/hooks', (extra, base) =>
        serveApp(
          [process.execPath, '.output/server/index.mjs'],
          app,
          starterEnv({ NODE_ENV: 'production', ...extra }),
          base,
        ),
      ),
    )
    console.log(line(`Nuxt minimal app (${nuxt}) + init`))
  }, 600_000)
})

/**
 * `affiliate-webhooks init` on a SvelteKit app made by its own creator, as a user
 * does it: `sv create` (sv 0.17.1, pinned; the minimal template, TypeScript) with
 * sv's own `sveltekit-adapter` add-on set to adapter-node, the way the Svelte docs
 * say to run a Node server (installing `@sveltejs/adapter-node` by hand takes its
 * newest major, which asks for Kit 3 and fails to resolve against the template's
 * Kit 2). The creator, the framework and its dependencies come from the npm
 * registry; `init --yes` installs this project's packages by name from the run's
 * local registry. Then `npm run build` (vite build), `node build` with HOST and
 * PORT, the emulator, an endpoint, `trigger --wait`: the conversion is processed,
 * a replay of the delivery is a duplicate, onConversion's line printed once.
 * Each step's time is printed.
 */
import { readFileSync } from 'node:fs'
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
const SV = 'sv@0.17.1'

const { app, work, served } = starterWorkspace('sveltekit')

describe('init on an app `sv create` made, with adapter-node', () => {
  it('creates, init --yes, builds, and a conversion from the emulator is handled once', async () => {
    const { step, line } = stepTimer()
    const env = starterEnv()
    await step('sv create', () =>
      run(
        [
          'npx',
          '--yes',
          SV,
          'create',
          'shop',
          '--template',
          'minimal',
          '--types',
          'ts',
          '--add',
          'sveltekit-adapter=adapter:node',
          '--no-install',
        ],
        work,
        env,
      ),
    )
    expect(readFileSync(join(app, 'vite.config.ts'), 'utf8')).toMatch(
      /from '@sveltejs\/adapter-node'/,
    )
    pointScopeAt(app, await sharedRegistry(), true)
    await step('npm install', () => npmInstall(app, env))

    const initRun = await step('init --yes', () =>
      run([process.execPath, CLI, 'init', '--yes'], app, env),
    )
    expect(initRun).toMatch(/^init: SvelteKit \(@sveltejs\/kit in package\.json\)$/m)
    expect(initRun).toMatch(/^ {6}store: memory \(one process\)/m)
    expect(initRun).toMatch(
      /^wrote src\/lib\/server\/affiliate-webhooks\.ts, src\/routes\/hooks\/\+server\.ts$/m,
    )
    expect(initRun).toMatch(/^installed @affiliate-webhooks\/web @affiliate-webhooks\/core$/m)
    const again = await run([process.execPath, CLI, 'init', '--yes'], app, env)
    expect(again).toMatch(/^up to date/m)

    await step('npm run build', () => run(['npm', 'run', 'build'], app, env))
    served.app = await step('node build + first verified event', () =>
      conversionHandledOnce('/hooks', (extra, base) =>
        serveApp(
          [process.execPath, 'build'],
          app,
          starterEnv({ NODE_ENV: 'production', ...extra }),
          base,
        ),
      ),
    )
    console.log(line(`sv create (${SV}) + init`))
  }, 600_000)
})

/**
 * `affiliate-webhooks init` on the app Fastify's own generator makes, as a
 * user does it (issue 58): `fastify-cli generate shop --lang=ts`
 * (fastify-cli 8.0.2, pinned: Fastify 5, TypeScript, CommonJS,
 * @fastify/autoload over plugins/ and routes/, app.ts exporting the plugin:
 * no Fastify(), no listen), its dependencies from the npm registry,
 * `init --yes` installing this project's packages by name from the run's
 * local registry. init leaves app.ts alone and writes a route file in the
 * folder autoload loads. Then the app's own `npm start` (tsc, then
 * `fastify start`, which reads .env) with the secret only in .env, the
 * emulator, an endpoint, `trigger --wait`: the conversion is processed, a
 * replay of the delivery is a duplicate, onConversion's line printed once.
 * Each step's time is printed.
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

/** The generator, pinned: the template's dependency ranges are the ones this version writes. */
const FASTIFY_CLI = 'fastify-cli@8.0.2'

const { app, work, served } = starterWorkspace('fastify-cli')

describe('init on an app `fastify-cli generate --lang=ts` made', () => {
  it('generates, init --yes (app.ts untouched), and npm start with .env only handles a conversion once', async () => {
    const { step, line } = stepTimer()
    const env = starterEnv()
    await step('fastify-cli generate', () =>
      run(['npx', '--yes', FASTIFY_CLI, 'generate', 'shop', '--lang=ts'], work, env),
    )
    // The template as generated does not compile with the TypeScript 6 it asks for
    // (TS5011: rootDir must be set when outDir is); the fix the error names, as a user makes it.
    const tsconfig = JSON.parse(readFileSync(join(app, 'tsconfig.json'), 'utf8'))
    tsconfig.compilerOptions.rootDir = 'src'
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2))
    const appTs = readFileSync(join(app, 'src/app.ts'), 'utf8')
    pointScopeAt(app, await sharedRegistry(), true)
    await step('npm install', () => npmInstall(app, env))

    const initRun = await step('init --yes', () =>
      run([process.execPath, CLI, 'init', '--yes'], app, env),
    )
    expect(initRun).toMatch(/^init: Fastify \(@fastify\/autoload routes, fastify-cli\)/m)
    expect(initRun).toMatch(
      /^wrote src\/affiliate-webhooks\.ts, src\/routes\/affiliate-webhooks\.ts$/m,
    )
    expect(initRun).not.toMatch(/by hand|npx affiliate-webhooks/)
    expect(initRun).toMatch(/^ {2}npm run dev$/m)
    expect(readFileSync(join(app, 'src/app.ts'), 'utf8')).toBe(appTs)
    expect(await run([process.execPath, CLI, 'init', '--yes'], app, env)).toMatch(/^up to date/m)

    served.app = await step('npm start (tsc + fastify start) + first verified event', () =>
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
          ['npm', 'start'],
          app,
          starterEnv({ PORT: extra.PORT as string, FASTIFY_ADDRESS: '127.0.0.1' }),
          base,
        )
      }),
    )
    console.log(line(`fastify-cli generate (${FASTIFY_CLI}) + init`))
  }, 600_000)
})

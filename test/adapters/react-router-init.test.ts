/**
 * `affiliate-webhooks init` on a React Router app (framework mode), as a user
 * does it. Not made by create-react-router: create-react-router (8.4.0) takes
 * its default template from GitHub, which neither this machine nor CI reaches
 * ("Oh no! Something went wrong."). The app is written as that template lays
 * it out, smallest: package.json with the build and start scripts,
 * react-router.config.ts (ssr), vite.config.ts with the reactRouter plugin,
 * app/root.tsx, app/routes.ts listing `index("routes/home.tsx")`, the home route
 * and a tsconfig; its packages from the npm registry at examples/react-router's
 * locked versions. `init --yes` installs this project's packages by name from the
 * run's local registry and writes the route file, but does not edit app/routes.ts:
 * it prints the route() line to add, and the test adds it there (and `route` to
 * the import) as a user would. Then `npm run build` (react-router build),
 * `react-router-serve ./build/server/index.js` with HOST and PORT, the emulator,
 * an endpoint, `trigger --wait`: the conversion is processed, a replay of the
 * delivery is a duplicate, onConversion's line printed once. Each step's time is
 * printed.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { lockedVersion, npmInstall, run } from '../stacks/copied-example.js'
import { CLI } from '../support/cli-live.js'
import { pointScopeAt, sharedRegistry } from '../support/shared-registry.js'
import {
  conversionHandledOnce,
  serveApp,
  starterEnv,
  starterWorkspace,
  stepTimer,
} from '../support/starter-app.js'

const { app, served } = starterWorkspace('react-router')

const ROUTES = `import { type RouteConfig, index } from '@react-router/dev/routes'

export default [index('routes/home.tsx')] satisfies RouteConfig
`

const ROOT = `import { Links, Meta, Outlet, Scripts } from 'react-router'

export default function App() {
  return (
    <html lang="en">
      <head>
        <Meta />
        <Links />
      </head>
      <body>
        <Outlet />
        <Scripts />
      </body>
    </html>
  )
}
`

/** The app's files, as the default template lays them out, and its packages at the locked versions. */
function manualSetup(): void {
  mkdirSync(join(app, 'app/routes'), { recursive: true })
  const at = (name: string) => `${name}@${lockedVersion('react-router', name)}`
  const manifest = {
    name: 'shop',
    type: 'module',
    private: true,
    scripts: {
      build: 'react-router build',
      dev: 'react-router dev',
      start: 'react-router-serve ./build/server/index.js',
    },
    dependencies: Object.fromEntries(
      ['react-router', '@react-router/node', '@react-router/serve', 'isbot', 'react', 'react-dom']
        .map(at)
        .map((spec) => [
          spec.slice(0, spec.lastIndexOf('@')),
          spec.slice(spec.lastIndexOf('@') + 1),
        ]),
    ),
    devDependencies: Object.fromEntries(
      ['@react-router/dev', 'vite', 'typescript', '@types/react', '@types/node']
        .map(at)
        .map((spec) => [
          spec.slice(0, spec.lastIndexOf('@')),
          spec.slice(spec.lastIndexOf('@') + 1),
        ]),
    ),
  }
  writeFileSync(join(app, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`)
  writeFileSync(
    join(app, 'react-router.config.ts'),
    "import type { Config } from '@react-router/dev/config'\n\nexport default { ssr: true } satisfies Config\n",
  )
  writeFileSync(
    join(app, 'vite.config.ts'),
    "import { reactRouter } from '@react-router/dev/vite'\nimport { defineConfig } from 'vite'\n\nexport default defineConfig({ plugins: [reactRouter()] })\n",
  )
  writeFileSync(join(app, 'app/root.tsx'), ROOT)
  writeFileSync(join(app, 'app/routes.ts'), ROUTES)
  writeFileSync(
    join(app, 'app/routes/home.tsx'),
    'export default function Home() {\n  return <h1>Shop</h1>\n}\n',
  )
  const compilerOptions = {
    target: 'ES2022',
    lib: ['ES2023', 'DOM', 'DOM.Iterable'],
    module: 'ESNext',
    moduleResolution: 'bundler',
    jsx: 'react-jsx',
    strict: true,
    skipLibCheck: true,
    noEmit: true,
  }
  writeFileSync(
    join(app, 'tsconfig.json'),
    `${JSON.stringify({ compilerOptions, include: ['app', '*.ts'] }, null, 2)}\n`,
  )
}

describe('init on a React Router app laid out as create-react-router lays it out', () => {
  it('init --yes, the printed route() line added, builds, and a conversion is handled once', async () => {
    const { step, line } = stepTimer()
    const env = starterEnv()
    await step('app files + npm install', async () => {
      manualSetup()
      pointScopeAt(app, await sharedRegistry())
      await npmInstall(app, env)
    })

    const initRun = await step('init --yes', () =>
      run([process.execPath, CLI, 'init', '--yes'], app, env),
    )
    expect(initRun).toMatch(
      /^init: React Router \(framework mode\) \(@react-router\/dev in package\.json\)$/m,
    )
    expect(initRun).toMatch(/^ {6}store: memory \(one process\)/m)
    expect(initRun).toMatch(/^wrote app\/lib\/affiliate-webhooks\.ts, app\/routes\/hooks\.ts$/m)
    expect(initRun).toMatch(/^installed @affiliate-webhooks\/web @affiliate-webhooks\/core$/m)
    // What init could not edit: app/routes.ts. It says which line goes there; a user adds it.
    expect(readFileSync(join(app, 'app/routes.ts'), 'utf8')).toBe(ROUTES)
    const printed =
      /add (route\('hooks', 'routes\/hooks\.ts'\)) there, and route to its import from @react-router\/dev\/routes \(init does not edit it\)/.exec(
        initRun,
      )?.[1]
    expect(printed, initRun).toBeDefined()
    writeFileSync(
      join(app, 'app/routes.ts'),
      ROUTES.replace('index }', 'index, route }').replace(
        "index('routes/home.tsx')]",
        `index('routes/home.tsx'), ${printed}]`,
      ),
    )
    expect(await run([process.execPath, CLI, 'init', '--yes'], app, env)).toMatch(/^up to date/m)

    await step('npm run build', () => run(['npm', 'run', 'build'], app, env))
    served.app = await step('react-router-serve + first verified event', () =>
      conversionHandledOnce('/hooks', (extra, base) =>
        serveApp(
          [join(app, 'node_modules/.bin/react-router-serve'), './build/server/index.js'],
          app,
          starterEnv({ NODE_ENV: 'production', ...extra }),
          base,
        ),
      ),
    )
    console.log(line('React Router app (create-react-router layout) + init'))
  }, 600_000)
})

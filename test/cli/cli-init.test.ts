/**
 * `affiliate-webhooks init` on small committed apps, one per stack
 * (test/cli/init-apps/): what it finds, the plan, `--dry-run`, the files it
 * writes, the lines it adds to .env, .gitignore and a Prisma schema, refusing
 * to overwrite, and the second run. The built CLI as a process, each app copied
 * to a temporary folder; packages are not installed here (--skip-install: the
 * install by name is test/cli/init-real-app.test.ts's).
 */
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { generatePrismaClient } from '../sql/prisma-clients.js'
import { CLI } from '../support/cli-live.js'
import { run } from '../support/run-process.js'

const apps = new URL('./init-apps/', import.meta.url).pathname
const work = mkdtempSync(join(tmpdir(), 'aw-init-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

let copies = 0
/** A fresh copy of a committed app. */
function copy(app: string): string {
  const dir = join(work, `${app}-${copies++}`)
  cpSync(join(apps, app), dir, { recursive: true })
  return dir
}

const init = (dir: string, ...args: string[]) =>
  run(process.execPath, [CLI, 'init', '--dir', dir, ...args], { input: '' })

const read = (dir: string, file: string) => readFileSync(join(dir, file), 'utf8')

/** What an install would have done: the packages the plan named, in package.json. */
function installed(dir: string, packages: string[]): void {
  const manifest = JSON.parse(read(dir, 'package.json'))
  manifest.dependencies = { ...manifest.dependencies }
  for (const name of packages) manifest.dependencies[name] = '1.0.0'
  writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest, null, 2))
}

async function plan(dir: string, ...args: string[]) {
  const result = await init(dir, '--dry-run', '--json', ...args)
  expect(result.code, result.stderr).toBe(0)
  return JSON.parse(result.stdout).plan
}

// The stack, store, package manager and files each committed app gets.
const CASES = [
  {
    app: 'next-prisma',
    stack: 'next-app',
    store: 'prisma',
    pm: 'npm',
    files: ['src/lib/affiliate-webhooks.ts', 'src/app/api/hooks/route.ts'],
    packages: [
      '@affiliate-webhooks/next',
      '@affiliate-webhooks/core',
      '@affiliate-webhooks/prisma',
      '@affiliate-webhooks/postgres',
    ],
  },
  {
    app: 'next-pages',
    stack: 'next-pages',
    store: 'memory',
    pm: 'pnpm',
    files: ['lib/affiliate-webhooks.mjs', 'pages/api/hooks.mjs'],
    packages: ['@affiliate-webhooks/next', '@affiliate-webhooks/core'],
  },
  {
    app: 'astro',
    stack: 'astro',
    store: 'memory',
    pm: 'npm',
    files: ['src/lib/affiliate-webhooks.ts', 'src/pages/hooks.ts'],
    packages: ['@affiliate-webhooks/web'],
  },
  {
    app: 'sveltekit-postgresjs',
    stack: 'sveltekit',
    store: 'postgres-js',
    pm: 'npm',
    files: [
      'src/lib/server/affiliate-webhooks.ts',
      'src/routes/hooks/+server.ts',
      'affiliate-webhooks-setup.mjs',
    ],
    packages: ['@affiliate-webhooks/web', '@affiliate-webhooks/postgres'],
  },
  {
    app: 'react-router',
    stack: 'react-router',
    store: 'memory',
    pm: 'npm',
    files: ['app/lib/affiliate-webhooks.ts', 'app/routes/hooks.ts'],
    packages: ['@affiliate-webhooks/web'],
  },
  {
    app: 'nuxt',
    stack: 'nuxt',
    store: 'memory',
    pm: 'npm',
    files: ['server/utils/affiliate-webhooks.ts', 'server/routes/hooks.post.ts'],
    packages: ['@affiliate-webhooks/h3'],
  },
  {
    app: 'express-sqlite',
    stack: 'express',
    store: 'sqlite',
    pm: 'npm',
    files: ['src/affiliate-webhooks.js', 'affiliate-webhooks-setup.mjs'],
    packages: ['@affiliate-webhooks/express', '@affiliate-webhooks/sqlite'],
  },
  {
    app: 'express-cjs',
    stack: 'express',
    store: 'postgres',
    pm: 'yarn',
    files: ['affiliate-webhooks.mjs', 'affiliate-webhooks-setup.mjs'],
    packages: ['@affiliate-webhooks/express', '@affiliate-webhooks/postgres'],
  },
  {
    app: 'fastify-redis',
    stack: 'fastify',
    store: 'redis',
    pm: 'bun',
    files: ['src/affiliate-webhooks.ts'],
    packages: ['@affiliate-webhooks/fastify', '@affiliate-webhooks/redis'],
  },
  {
    app: 'koa-mysql',
    stack: 'koa',
    store: 'mysql',
    pm: 'npm',
    files: ['affiliate-webhooks.js', 'affiliate-webhooks-setup.mjs'],
    packages: ['@affiliate-webhooks/koa', '@affiliate-webhooks/mysql'],
  },
  {
    app: 'hono',
    stack: 'hono',
    store: 'memory',
    pm: 'npm',
    files: ['src/affiliate-webhooks.ts'],
    packages: ['@affiliate-webhooks/web'],
  },
  {
    app: 'nest',
    stack: 'nest',
    store: 'memory',
    pm: 'npm',
    files: ['src/affiliate-webhooks.ts'],
    packages: ['@affiliate-webhooks/express'],
  },
  {
    app: 'plain-node',
    stack: 'node',
    store: 'memory',
    pm: 'npm',
    files: ['affiliate-webhooks.js'],
    packages: ['@affiliate-webhooks/node'],
  },
]

describe('init: what it finds and plans, per stack', () => {
  it.each(CASES)(
    '$app: $stack with the $store store, $pm',
    async ({ app, stack, store, pm, files, packages }) => {
      const dir = copy(app)
      const planned = await plan(dir)
      expect(planned.facts.stack.id).toBe(stack)
      expect(planned.facts.store.id).toBe(store)
      expect(planned.facts.packageManager).toBe(pm)
      expect(planned.files.map((file: { path: string }) => file.path)).toEqual(files)
      expect(planned.install.packages).toEqual(expect.arrayContaining(packages))
      // A dry run writes nothing.
      for (const file of files) expect(existsSync(join(dir, file))).toBe(false)
      expect(existsSync(join(dir, '.env'))).toBe(false)
    },
  )

  it('--framework and --store override what it found; an unknown one is one line and a hint', async () => {
    const dir = copy('express-sqlite')
    const planned = await plan(dir, '--framework', 'koa', '--store', 'redis')
    expect([planned.facts.stack.id, planned.facts.store.id]).toEqual(['koa', 'redis'])
    const wrong = await init(dir, '--framework', 'rails', '--dry-run')
    expect(wrong.code).toBe(2)
    expect(wrong.stderr.split('\n')[0]).toBe(
      'affiliate-webhooks init: --framework rails is not one init knows',
    )
    expect(wrong.stderr).toMatch(/^hint: use one of: next-app, next-pages, astro/m)
  })

  it('no package.json: one line, the usual cause, exit 2', async () => {
    const dir = mkdtempSync(join(work, 'empty-'))
    const result = await init(dir, '--dry-run')
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/^affiliate-webhooks init: no package\.json in /)
    expect(result.stderr).toMatch(/^hint: run init in the folder of your app/m)
  })
})

it('React Router: the plan says the route must be listed in app/routes.ts, which init does not edit', async () => {
  const planned = await plan(copy('react-router'))
  expect(planned.notes).toContain(
    "the route: with routes listed in app/routes.ts, add route('hooks', 'routes/hooks.ts') there, and route to its import from @react-router/dev/routes (init does not edit it); with flatRoutes() the file is found by its name",
  )
})

describe('init --yes on Next.js with Prisma', () => {
  const dir = copy('next-prisma')

  it('prints the plan as a diff, writes the route and the shared module, appends .env, .gitignore and the Prisma model', async () => {
    const result = await init(dir, '--yes', '--skip-install')
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toMatch(
      /^init: Next\.js \(App Router\) \(next in package\.json, \{src\/,\}app\)$/m,
    )
    expect(result.stdout).toMatch(/^ {2}create {2}src\/app\/api\/hooks\/route\.ts$/m)
    expect(result.stdout).toMatch(
      /^ {2}append {2}\.env: AFFILIATE_WEBHOOK_SECRET and DATABASE_URL/m,
    )
    expect(result.stdout).toMatch(/^ {4}\+ model AffiliateConversion \{$/m)
    expect(result.stdout).toMatch(/^not installed: run npm install @affiliate-webhooks\/next /m)
    expect(result.stdout).toMatch(
      /^ {2}npx @affiliate-webhooks\/cli trigger conversion\.created .* --wait$/m,
    )
    const route = read(dir, 'src/app/api/hooks/route.ts')
    expect(route).toContain("import { onConversion, store } from '../../../lib/affiliate-webhooks'")
    expect(route).toContain(
      'export const POST = affiliateWebhook({ secret: process.env.AFFILIATE_WEBHOOK_SECRET!, store, onConversion })',
    )
    const module = read(dir, 'src/lib/affiliate-webhooks.ts')
    expect(module).toContain("import { PrismaClient } from '../generated/prisma/client'")
    expect(module).toContain('kept.affiliateWebhookStore ??= prismaStore(')
    expect(module).toContain('await ctx.tx.affiliateConversion.upsert(')
    expect(read(dir, '.env')).toBe('AFFILIATE_WEBHOOK_SECRET=\nDATABASE_URL=\n')
    expect(read(dir, '.gitignore')).toBe('.env\n')
    expect(read(dir, 'prisma/schema.prisma')).toContain('@@map("affiliate_conversions")')
  })

  it('a second run (packages installed) says it is set up and changes nothing', async () => {
    installed(dir, [
      '@affiliate-webhooks/next',
      '@affiliate-webhooks/core',
      '@affiliate-webhooks/prisma',
      '@affiliate-webhooks/postgres',
    ])
    const before = read(dir, 'prisma/schema.prisma') + read(dir, '.env')
    const again = await init(dir, '--yes')
    expect(again.code).toBe(0)
    expect(again.stdout).toMatch(
      /^up to date: the route, the module, \.env and the packages are there; nothing changed\.$/m,
    )
    expect(read(dir, 'prisma/schema.prisma') + read(dir, '.env')).toBe(before)
  })

  it('never changes a variable already in .env, and never overwrites a changed file without --force', async () => {
    writeFileSync(
      join(dir, '.env'),
      'AFFILIATE_WEBHOOK_SECRET=whsec_kept\nDATABASE_URL=postgres://kept\n',
    )
    writeFileSync(join(dir, 'src/app/api/hooks/route.ts'), '// mine\n')
    const refused = await init(dir, '--yes', '--skip-install')
    expect(refused.code).toBe(1)
    expect(refused.stdout).toMatch(
      /DIFFERS {2}src\/app\/api\/hooks\/route\.ts \(there with other text: kept unless --force\)/,
    )
    expect(read(dir, 'src/app/api/hooks/route.ts')).toBe('// mine\n')
    expect(read(dir, '.env')).toBe(
      'AFFILIATE_WEBHOOK_SECRET=whsec_kept\nDATABASE_URL=postgres://kept\n',
    )
    const forced = await init(dir, '--yes', '--force', '--skip-install')
    expect(forced.code).toBe(0)
    expect(read(dir, 'src/app/api/hooks/route.ts')).toContain('export const POST')
  })

  it('without --yes and without a terminal to ask in, writes nothing and says how', async () => {
    const fresh = copy('next-prisma')
    const result = await init(fresh)
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(
      /^affiliate-webhooks init: nothing written: not a terminal to ask in$/m,
    )
    expect(result.stderr).toMatch(/^hint: pass --yes to write without asking, or --dry-run/m)
    expect(existsSync(join(fresh, 'src/app/api/hooks/route.ts'))).toBe(false)
  })
})

describe("init on a stack mounted in the app's own file (Express)", () => {
  it('writes the module and edits the app file (the mount before express.json()); a second run is up to date', async () => {
    const dir = copy('express-sqlite')
    const first = await init(dir, '--yes', '--skip-install')
    expect(first.code, first.stderr).toBe(0)
    expect(first.stdout).toMatch(
      /^ {2}edit {4}src\/app\.js: the import, and the mount right after the app is made, before any app\.use\(express\.json\(\)\)/m,
    )
    expect(first.stdout).toMatch(/^ {4}\+import \{ webhook \} from '\.\/affiliate-webhooks\.js'$/m)
    expect(first.stdout).toMatch(/^ {4}\+app\.post\('\/hooks', webhook\)$/m)
    expect(read(dir, 'src/app.js')).toContain(
      "const app = express()\napp.post('/hooks', webhook)\napp.use(express.json())\n",
    )
    const module = read(dir, 'src/affiliate-webhooks.js')
    expect(module).toContain("import Database from 'better-sqlite3'")
    expect(module).toContain(
      'export const webhook = affiliateWebhook({ secret: process.env.AFFILIATE_WEBHOOK_SECRET, store, onConversion })',
    )
    expect(read(dir, '.env')).toBe('AFFILIATE_WEBHOOK_SECRET=\nSQLITE_FILE=app.db\n')
    const pending = await init(dir, '--dry-run')
    expect(pending.stdout).not.toMatch(/^up to date/m)
    installed(dir, [
      '@affiliate-webhooks/express',
      '@affiliate-webhooks/core',
      '@affiliate-webhooks/sqlite',
    ])
    const again = await init(dir, '--yes')
    expect(again.stdout).toMatch(/^up to date/m)
  })
})

describe('what init writes compiles', () => {
  // Inside the workspace (.tmp/ is git-ignored), so the packages and drivers resolve by name.
  const root = new URL('../../', import.meta.url).pathname
  mkdirSync(join(root, '.tmp'), { recursive: true })
  const inside = mkdtempSync(join(root, '.tmp', 'init-compile-'))
  afterAll(() => rmSync(inside, { recursive: true, force: true }))
  const TYPESCRIPT = [
    { app: 'next-prisma', files: ['src/lib/affiliate-webhooks.ts', 'src/app/api/hooks/route.ts'] },
    // SvelteKit's own types ($app/environment) come from the app's sync: a stand-in here.
    {
      app: 'sveltekit-postgresjs',
      files: ['src/lib/server/affiliate-webhooks.ts', 'app-environment.d.ts'],
    },
    { app: 'fastify-redis', files: ['src/affiliate-webhooks.ts'] },
    { app: 'hono', files: ['src/affiliate-webhooks.ts'] },
    { app: 'nest', files: ['src/affiliate-webhooks.ts'] },
  ]

  it.each(TYPESCRIPT)(
    '$app: the shared module (and a route that needs no framework types) with strict TypeScript',
    async ({ app, files }) => {
      const dir = join(inside, app)
      cpSync(join(apps, app), dir, { recursive: true })
      const result = await init(dir, '--yes', '--skip-install')
      expect(result.code, result.stderr).toBe(0)
      if (files.includes('app-environment.d.ts'))
        writeFileSync(
          join(dir, 'app-environment.d.ts'),
          "declare module '$app/environment' {\n  export const building: boolean\n}\n",
        )
      if (existsSync(join(dir, 'prisma/schema.prisma'))) {
        await generatePrismaClient(
          read(dir, 'prisma/schema.prisma'),
          join(dir, 'src/generated/prisma'),
        )
      }
      writeFileSync(
        join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            strict: true,
            noEmit: true,
            target: 'ES2022',
            module: 'esnext',
            moduleResolution: 'bundler',
            skipLibCheck: true,
            types: ['node'],
          },
          files,
        }),
      )
      const tsc = await run(process.execPath, [
        join(root, 'node_modules/typescript/bin/tsc'),
        '-p',
        join(dir, 'tsconfig.json'),
      ])
      expect(tsc.stdout + tsc.stderr).toBe('')
      expect(tsc.code).toBe(0)
    },
    60_000,
  )
})

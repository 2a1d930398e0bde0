/**
 * What a third new user met (issue 58), held on small committed apps
 * (test/cli/init-apps/): `.env` loaded by the app's own start scripts where the
 * stack does not read it (Nest, Express) and left alone where it does
 * (fastify-cli); a missing DATABASE_URL named in one line; every command shown
 * runs this project's CLI by its scoped name; a fastify-cli app wired by a
 * route file autoload loads, its app.ts untouched; the app's table created by
 * a setup step, never in a delivery; the start command one of the app's own
 * scripts. The built CLI as a process, packages not installed (--skip-install).
 */
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { CLI } from '../support/cli-live.js'
import { run } from '../support/run-process.js'

const root = new URL('../../', import.meta.url).pathname
const apps = new URL('./init-apps/', import.meta.url).pathname
const work = mkdtempSync(join(tmpdir(), 'aw-init-newcomer-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

let copies = 0
function copy(app: string): string {
  const dir = join(work, `${app}-${copies++}`)
  cpSync(join(apps, app), dir, { recursive: true })
  return dir
}

const init = (dir: string, ...args: string[]) =>
  run(process.execPath, [CLI, 'init', '--dir', dir, ...args], { input: '' })
const read = (dir: string, file: string) => readFileSync(join(dir, file), 'utf8')
const scripts = (dir: string): Record<string, string> =>
  JSON.parse(read(dir, 'package.json')).scripts

async function plan(dir: string, ...args: string[]) {
  const result = await init(dir, '--dry-run', '--json', ...args)
  expect(result.code, result.stderr).toBe(0)
  return JSON.parse(result.stdout).plan
}

/** What an install would have done: the packages the plan named, in package.json. */
function installed(dir: string, packages: string[]): void {
  const manifest = JSON.parse(read(dir, 'package.json'))
  for (const name of packages) manifest.dependencies[name] = '1.0.0'
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`)
}

describe('.env: loaded by the start scripts where the stack does not read it (1)', () => {
  it('Nest (nest new 12): nest start --env-file .env, node --env-file-if-exists=.env dist/main; a second run is up to date', async () => {
    const dir = copy('nest12-mysql')
    const first = await init(dir, '--yes', '--skip-install')
    expect(first.code, first.stderr).toBe(0)
    expect(first.stdout).toMatch(
      /^ {2}change {2}package\.json scripts\.start:dev: NestJS does not read \.env: this loads it$/m,
    )
    expect(first.stdout).toMatch(/^ {4}\+ "nest start --env-file \.env --watch"$/m)
    expect(scripts(dir)).toMatchObject({
      start: 'nest start --env-file .env',
      'start:dev': 'nest start --env-file .env --watch',
      'start:debug': 'nest start --env-file .env --debug --watch',
      'start:prod': 'node --env-file-if-exists=.env dist/main',
      build: 'nest build',
      test: 'vitest run',
    })
    // package.json keeps its layout: two spaces, a final newline.
    expect(read(dir, 'package.json')).toMatch(/^\{\n {2}"name": "nest-shop",\n/)
    expect(read(dir, 'package.json').endsWith('}\n')).toBe(true)
    installed(dir, [
      '@affiliate-webhooks/express',
      '@affiliate-webhooks/core',
      '@affiliate-webhooks/mysql',
    ])
    expect((await init(dir, '--yes')).stdout).toMatch(/^up to date/m)
  })

  it('Express: node --env-file-if-exists=.env in start and dev, and the note says why', async () => {
    const planned = await plan(copy('express-pg'))
    const changed = Object.fromEntries(
      planned.scripts.map((s: { script: string; after: string }) => [s.script, s.after]),
    )
    expect(changed).toMatchObject({
      start: 'node --env-file-if-exists=.env src/app.js',
      dev: 'node --env-file-if-exists=.env --watch src/app.js',
    })
    expect(planned.notes).toContain(
      '.env: Express does not read it; init makes the scripts start, dev load it (node --env-file-if-exists=.env)',
    )
  })

  it('fastify-cli reads .env itself (fastify start): no script changed', async () => {
    const planned = await plan(copy('fastify-cli-ts'))
    expect(planned.scripts).toEqual([])
    expect(planned.notes).toContain(
      '.env: Fastify (@fastify/autoload routes, fastify-cli) reads it itself',
    )
  })

  it('a start script init does not know (nodemon) is named, not changed', async () => {
    const dir = copy('express-pg')
    const manifest = JSON.parse(read(dir, 'package.json'))
    manifest.scripts = { start: 'nodemon src/app.js' }
    writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest))
    const planned = await plan(dir)
    expect(planned.scripts.map((s: { script: string }) => s.script)).toEqual([
      'affiliate-webhooks:setup',
    ])
    expect(planned.notes.at(-1)).toMatch(
      /the scripts start run no command init knows: load it there yourself \(node --env-file-if-exists=\.env\)$/,
    )
  })

  it('the generated module names an empty DATABASE_URL in one line', async () => {
    const dir = copy('express-pg')
    expect((await init(dir, '--yes', '--skip-install')).code).toBe(0)
    const module = read(dir, 'src/affiliate-webhooks.js')
    expect(module).toContain(
      "postgresStore({ pool: new pg.Pool({ connectionString: required('DATABASE_URL') }) })",
    )
    expect(module).not.toContain("?? ''")
    // The helper as written, run with the variable empty (as init leaves it in .env).
    const helper = /^function required\(name\) \{[\s\S]*?^\}$/m.exec(module)?.[0] as string
    const required = new Function(`${helper}\nreturn required`)() as (name: string) => string
    process.env.AW_INIT_TEST_EMPTY = ''
    expect(() => required('AW_INIT_TEST_EMPTY')).toThrow(
      "AW_INIT_TEST_EMPTY is not set: put it in .env (AW_INIT_TEST_EMPTY=...) or in the app's environment, then start the app again",
    )
    delete process.env.AW_INIT_TEST_EMPTY
  })
})

describe('every command shown runs this project’s CLI by its scoped name (2)', () => {
  const bare = /\b(npx|bunx|pnpm dlx|yarn dlx)( --?\w+)* affiliate-webhooks\b/

  it.each(['nest12-mysql', 'express-pg', 'fastify-cli-ts', 'next-prisma', 'sveltekit-postgresjs'])(
    '%s: the next commands',
    async (app) => {
      const planned = await plan(copy(app))
      const cli = planned.next.filter(
        (line: string) => line.includes('affiliate-webhooks') && !line.includes(':setup'),
      )
      expect(cli.length).toBe(3)
      for (const line of cli) expect(line).toMatch(/^npx @affiliate-webhooks\/cli /)
      expect(planned.next.join('\n')).not.toMatch(bare)
    },
  )

  it('the README and docs show no bare name (npx affiliate-webhooks would run whoever publishes it)', () => {
    const files = [
      'README.md',
      ...readdirSync(join(root, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`),
      ...readdirSync(join(root, 'packages')).map((p) => `packages/${p}/README.md`),
      ...readdirSync(join(root, 'examples')).map((e) => `examples/${e}/README.md`),
    ]
    const found: string[] = []
    for (const file of files) {
      let text: string
      try {
        text = readFileSync(join(root, file), 'utf8')
      } catch {
        continue
      }
      text.split('\n').forEach((line, index) => {
        if (bare.test(line)) found.push(`${file}:${index + 1}: ${line.trim()}`)
      })
    }
    expect(found).toEqual([])
  })
})

describe('fastify-cli (@fastify/autoload): a route file autoload loads, app.ts untouched (3)', () => {
  it('TypeScript (fastify-cli generate --lang=ts): src/routes/affiliate-webhooks.ts registers the plugin in its own context', async () => {
    const dir = copy('fastify-cli-ts')
    const app = read(dir, 'src/app.ts')
    const result = await init(dir, '--yes', '--skip-install')
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toMatch(
      /^init: Fastify \(@fastify\/autoload routes, fastify-cli\) \(@fastify\/autoload in package\.json, \{src\/,\}routes\)$/m,
    )
    expect(result.stdout).not.toMatch(/by hand|Fastify\(\)/)
    expect(result.stdout).toMatch(
      /^wrote src\/affiliate-webhooks\.ts, src\/routes\/affiliate-webhooks\.ts$/m,
    )
    expect(read(dir, 'src/app.ts')).toBe(app)
    const route = read(dir, 'src/routes/affiliate-webhooks.ts')
    expect(route).toContain("import { onConversion, store } from '../affiliate-webhooks.js'")
    expect(route).toContain(
      "await fastify.register(affiliateWebhook, { path: '/hooks', secret: process.env.AFFILIATE_WEBHOOK_SECRET!, store, onConversion })",
    )
    expect(route).toContain('export default affiliateWebhooks')
    installed(dir, ['@affiliate-webhooks/fastify', '@affiliate-webhooks/core'])
    expect((await init(dir, '--yes')).stdout).toMatch(/^up to date/m)
  })

  it('JavaScript, CommonJS, routes/ at the top (fastify-cli generate): routes/affiliate-webhooks.mjs', async () => {
    const dir = join(work, 'fastify-cli-js')
    mkdirSync(join(dir, 'routes'), { recursive: true })
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({
        name: 'js-app',
        scripts: {
          start: 'fastify start -l info app.js',
          dev: 'fastify start -w -l info -P app.js',
        },
        dependencies: { fastify: '^5.0.0', '@fastify/autoload': '^6.0.0', 'fastify-cli': '^8.0.0' },
      }),
    )
    writeFileSync(
      join(dir, 'app.js'),
      "'use strict'\nmodule.exports = async function (fastify, opts) {}\n",
    )
    const planned = await plan(dir)
    expect(planned.facts.stack.id).toBe('fastify-autoload')
    expect(planned.files.map((f: { path: string }) => f.path)).toEqual([
      'affiliate-webhooks.mjs',
      'routes/affiliate-webhooks.mjs',
    ])
    expect(planned.files[1].text).toContain("from '../affiliate-webhooks.mjs'")
    expect(planned.mount).toBeUndefined()
  })
})

describe('other plugin-style Fastify layouts: the app file exports a plugin (3)', () => {
  /** A Fastify app whose file exports the plugin (no Fastify(), no listen, no autoload routes/). */
  async function planFor(file: string, source: string, esm: boolean) {
    const dir = join(work, `fastify-plugin-${copies++}`)
    mkdirSync(join(dir, 'src'), { recursive: true })
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({
        name: 'plugin-app',
        ...(esm ? { type: 'module' } : {}),
        scripts: { start: 'fastify start -l info src/app.js' },
        dependencies: { fastify: '^5.0.0', 'fastify-cli': '^8.0.0' },
        devDependencies: file.endsWith('.ts') ? { typescript: '^6.0.0' } : {},
      }),
    )
    writeFileSync(join(dir, file), source)
    return plan(dir)
  }

  it('TypeScript: const app: FastifyPluginAsync = async (fastify, opts) => { ... }; export default app', async () => {
    const source = [
      "import { type FastifyPluginAsync } from 'fastify'",
      '',
      'const app: FastifyPluginAsync = async (fastify, opts): Promise<void> => {',
      "  fastify.get('/', async () => ({ root: true }))",
      '}',
      '',
      'export default app',
      '',
    ].join('\n')
    const planned = await planFor('src/app.ts', source, false)
    expect(planned.facts.stack.id).toBe('fastify')
    expect(planned.mount.refused).toBeUndefined()
    expect(planned.edit.text).toBe(
      source
        .replace(
          "from 'fastify'\n",
          "from 'fastify'\nimport { registerWebhook } from './affiliate-webhooks'\n",
        )
        .replace('=> {\n', '=> {\n  await registerWebhook(fastify)\n'),
    )
    expect(planned.edit.where).toMatch(/^first in the plugin the file exports/)
  })

  it('CommonJS: module.exports = async function (fastify, opts) { ... }', async () => {
    const source = [
      "'use strict'",
      '',
      "const path = require('node:path')",
      '',
      'module.exports = async function (instance, opts) {',
      "  instance.get('/', async () => 'ok')",
      '}',
      '',
    ].join('\n')
    const planned = await planFor('src/app.js', source, false)
    expect(planned.edit.text).toContain(
      "const path = require('node:path')\nconst { registerWebhook } = require('./affiliate-webhooks.mjs')\n",
    )
    expect(planned.edit.text).toContain(
      'module.exports = async function (instance, opts) {\n  await registerWebhook(instance)\n',
    )
  })
})

describe("the app's table: created once before deliveries, never in one (4)", () => {
  it.each([
    ['express-pg', 'src/affiliate-webhooks.js'],
    ['nest12-mysql', 'src/affiliate-webhooks.ts'],
    ['sveltekit-postgresjs', 'src/lib/server/affiliate-webhooks.ts'],
    ['express-sqlite', 'src/affiliate-webhooks.js'],
  ])(
    '%s: no DDL in the module; a setup script and its package.json script, named in the plan',
    async (app, module) => {
      const dir = copy(app)
      const result = await init(dir, '--yes', '--skip-install')
      expect(result.code, result.stderr).toBe(0)
      expect(read(dir, module)).not.toMatch(/CREATE TABLE|TABLE\)/)
      expect(read(dir, 'affiliate-webhooks-setup.mjs')).toContain(
        "const TABLE =\n  'CREATE TABLE IF NOT EXISTS affiliate_conversions",
      )
      expect(scripts(dir)['affiliate-webhooks:setup']).toBe(
        'node --env-file-if-exists=.env affiliate-webhooks-setup.mjs',
      )
      expect(result.stdout).toMatch(/^ {2}npm run affiliate-webhooks:setup {3}# once, after /m)
    },
  )

  it('the setup script with DATABASE_URL empty: one line and exit 1, no stack trace', async () => {
    const dir = copy('express-pg')
    expect((await init(dir, '--yes', '--skip-install')).code).toBe(0)
    // pg is not installed in this copy: the variable is checked before the driver is used,
    // so only the import must resolve; point it at the repository's pg.
    const text = read(dir, 'affiliate-webhooks-setup.mjs').replace(
      "from 'pg'",
      `from '${join(root, 'node_modules/pg/esm/index.mjs')}'`,
    )
    writeFileSync(join(dir, 'affiliate-webhooks-setup.mjs'), text)
    const setup = await run(
      process.execPath,
      [`--env-file-if-exists=${join(dir, '.env')}`, join(dir, 'affiliate-webhooks-setup.mjs')],
      { env: { DATABASE_URL: undefined } },
    )
    expect(setup.code).toBe(1)
    expect(setup.stderr.trim()).toBe(
      'DATABASE_URL is not set: put it in .env (DATABASE_URL=...) or in the environment, then run this again',
    )
  })
})

describe("the start command is one of the app's own scripts (6)", () => {
  it.each([
    ['nest12-mysql', 'npm run start:dev'],
    ['express-pg', 'npm run dev'],
    ['fastify-cli-ts', 'npm run dev'],
  ])('%s: %s', async (app, command) => {
    const planned = await plan(copy(app))
    expect(planned.next.filter((line: string) => !line.includes('affiliate-webhooks'))).toEqual([
      command,
    ])
  })

  it('only a start script: npm run start; none: says so, and names no script', async () => {
    const dir = copy('express-pg')
    const manifest = JSON.parse(read(dir, 'package.json'))
    manifest.scripts = { start: 'node src/app.js' }
    writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest))
    expect((await plan(dir)).next).toContain('npm run start')
    manifest.scripts = {}
    writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest))
    const none = (await plan(dir)).next as string[]
    expect(none).toContain(
      '# start your app with .env loaded: package.json has no dev or start script',
    )
    expect(none.join('\n')).not.toMatch(/npm run (dev|start)\b/)
  })
})

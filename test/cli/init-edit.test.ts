/**
 * `init` editing the app's own file (Express, Fastify, Koa, Hono, Nest): the
 * file after the edit (the mount before the body parser), the diff the plan
 * shows, `--dry-run`, the second run, the file changed between plan and write,
 * and each case where it is not sure and prints the lines instead. The built
 * CLI as a process on copies of the committed apps (test/cli/init-apps/);
 * --skip-install. Last, an edited Express app with express.json() mounted
 * globally runs on a real socket and takes a signed event.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import { afterAll, describe, expect, it } from 'vitest'
import { applyPlan } from '../../packages/cli/src/init/apply.js'
import { detectApp } from '../../packages/cli/src/init/detect.js'
import { editAppFile } from '../../packages/cli/src/init/edit.js'
import { planInit, withEdit } from '../../packages/cli/src/init/plan.js'
import { CLI } from '../support/cli-live.js'
import { freePort } from '../support/redis-servers.js'
import { run } from '../support/run-process.js'

const apps = new URL('./init-apps/', import.meta.url).pathname
const work = mkdtempSync(join(tmpdir(), 'aw-init-edit-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

let copies = 0
function copy(app: string, into = work): string {
  const dir = join(into, `${app}-${copies++}`)
  cpSync(join(apps, app), dir, { recursive: true })
  return dir
}

const init = (dir: string, ...args: string[]) =>
  run(process.execPath, [CLI, 'init', '--dir', dir, '--skip-install', ...args], { input: '' })
const read = (dir: string, file: string) => readFileSync(join(dir, file), 'utf8')

/** The edit's diff as the plan prints it: the indented lines under `  edit`, without the indent. */
function diffOf(stdout: string): string[] {
  const lines = stdout.split('\n')
  const start = lines.findIndex((line) => line.startsWith('  edit    '))
  const diff: string[] = []
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith('    ')) break
    diff.push(line.slice(4))
  }
  return diff
}

// Each stack's app, the file init edits, and that file after the edit.
const EDITS = [
  {
    app: 'express-json',
    file: 'src/app.js',
    after: `import express from 'express'
import { webhook } from './affiliate-webhooks.js'

const port = Number(process.env.PORT ?? 3000)

const app = express()
app.post('/hooks', webhook)
app.use(express.json())
`,
  },
  {
    app: 'express-cjs',
    file: 'app.js',
    after: `const express = require('express')
const { webhook } = require('./affiliate-webhooks.mjs')
const app = express()
app.post('/hooks', webhook)
app.use(express.json())
app.listen(3000)
`,
  },
  {
    app: 'express4-ts',
    file: 'src/index.ts',
    after: `import express, { type Request, type Response } from 'express';
import bodyParser from 'body-parser';
import { webhook } from './affiliate-webhooks';

export function createServer() {
  const server = express();
  server.post('/hooks', webhook);
  server.use(bodyParser.json());
`,
  },
  {
    app: 'fastify-redis',
    file: 'src/index.ts',
    after: `import Fastify from 'fastify'
import { registerWebhook } from './affiliate-webhooks.js'

const app = Fastify()
await registerWebhook(app)
await app.listen({ port: 3000 })
`,
  },
  {
    app: 'koa-bodyparser',
    file: 'index.js',
    after: `  ctx.set('X-Response-Time', \`\${Date.now() - started}ms\`)
})
app.use(webhook)
app.use(bodyParser())
`,
  },
  {
    app: 'hono',
    file: 'src/index.ts',
    after: `import { Hono } from 'hono'
import { webhook } from './affiliate-webhooks.js'

const app = new Hono()
app.post('/hooks', (c) => webhook(c.req.raw))
export default app
`,
  },
  {
    app: 'nest',
    file: 'src/main.ts',
    after: `import { NestFactory } from '@nestjs/core'
import { AppModule } from './app.module'
import { webhook } from './affiliate-webhooks'

async function bootstrap() {
  const app = await NestFactory.create(AppModule)
  app.use('/hooks', webhook)
  await app.listen(3000)
}
`,
  },
]

describe("init edits the app's own file", () => {
  it.each(EDITS)(
    '$app: --dry-run shows the diff and writes nothing; --yes edits $file as shown',
    async ({ app, file, after }) => {
      const dir = copy(app)
      const before = read(dir, file)
      const dry = await init(dir, '--dry-run')
      expect(dry.code, dry.stderr).toBe(0)
      expect(dry.stdout).toMatch(
        new RegExp(`^ {2}edit {4}${file.replace('.', '\\.')}: the import, and the mount `, 'm'),
      )
      expect(dry.stdout).not.toMatch(/by hand/)
      expect(read(dir, file)).toBe(before)

      const done = await init(dir, '--yes')
      expect(done.code, done.stderr).toBe(0)
      expect(done.stdout).toMatch(new RegExp(`^edited ${file.replace('.', '\\.')} as shown$`, 'm'))
      const edited = read(dir, file)
      expect(edited).toContain(after)
      // The diff shown is the change made: its added lines are the lines added, and only those.
      const diff = diffOf(dry.stdout)
      expect(diff.slice(0, 2)).toEqual([`--- ${file}`, `+++ ${file}`])
      const added = diff.filter((line) => line.startsWith('+') && !line.startsWith('+++'))
      expect(added).toHaveLength(2)
      const lines = edited.split('\n')
      for (const line of added) expect(lines).toContain(line.slice(1))
      expect(lines.filter((line) => !added.includes(`+${line}`))).toEqual(before.split('\n'))
    },
  )

  it('a second run sees the mount there: the file is not edited again, and with the packages in, it is up to date', async () => {
    const dir = copy('express-json')
    expect((await init(dir, '--yes')).code).toBe(0)
    const edited = read(dir, 'src/app.js')
    const again = await init(dir, '--yes')
    expect(again.stdout).not.toMatch(/^ {2}edit /m)
    expect(read(dir, 'src/app.js')).toBe(edited)
    const manifest = JSON.parse(read(dir, 'package.json'))
    for (const name of ['@affiliate-webhooks/express', '@affiliate-webhooks/core'])
      manifest.dependencies[name] = '1.0.0'
    writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest))
    const third = await init(dir, '--yes', '--store', 'memory')
    expect(third.code).toBe(0)
    expect(third.stdout).toMatch(/^up to date/m)
    expect(read(dir, 'src/app.js')).toBe(edited)
  })
})

describe('the edit, as data', () => {
  it('writes the edited file only if it still reads what the plan read', async () => {
    const dir = copy('express-json')
    const plan = await withEdit(planInit(detectApp(dir, {})))
    expect(plan.edit?.path).toBe('src/app.js')
    const changed = `${read(dir, 'src/app.js')}// saved in an editor meanwhile\n`
    writeFileSync(join(dir, 'src/app.js'), changed)
    const applied = applyPlan(plan)
    expect(applied.changed).toEqual(['src/app.js'])
    expect(applied.edited).toEqual([])
    expect(read(dir, 'src/app.js')).toBe(changed)
  })

  it("names the app by its own variable, never a part of the route's path; export const counts", async () => {
    const result = await editAppFile({
      stack: 'hono',
      file: 'src/index.ts',
      esm: true,
      source: "import { Hono as H } from 'hono'\n\nexport const api = new H();\n",
      importLine: "import { webhook } from './affiliate-webhooks.js'",
      mountLine: "app.post('/app/hooks', (c) => webhook(c.req.raw))",
    })
    expect(result).toEqual({
      text: "import { Hono as H } from 'hono'\nimport { webhook } from './affiliate-webhooks.js';\n\nexport const api = new H();\napi.post('/app/hooks', (c) => webhook(c.req.raw));\n",
      where: expect.any(String),
    })
  })

  it('Koa without a body parser: the mount right after the app; Fastify in an async function: after the instance', async () => {
    const koa = await editAppFile({
      stack: 'koa',
      file: 'index.js',
      esm: true,
      source: "import Koa from 'koa'\nconst app = new Koa()\napp.use(routes)\n",
      importLine: "import { webhook } from './affiliate-webhooks.js'",
      mountLine: 'app.use(webhook)',
    })
    expect('text' in koa && koa.text).toBe(
      "import Koa from 'koa'\nimport { webhook } from './affiliate-webhooks.js'\nconst app = new Koa()\napp.use(webhook)\napp.use(routes)\n",
    )
    const fastify = await editAppFile({
      stack: 'fastify',
      file: 'server.js',
      esm: false,
      source:
        "const Fastify = require('fastify')\n\nasync function main() {\n  const server = Fastify()\n  await server.listen({ port: 3000 })\n}\nmain()\n",
      importLine: "import { registerWebhook } from './affiliate-webhooks.mjs'",
      mountLine: 'await registerWebhook(app)',
    })
    expect('text' in fastify && fastify.text).toBe(
      "const Fastify = require('fastify')\nconst { registerWebhook } = require('./affiliate-webhooks.mjs')\n\nasync function main() {\n  const server = Fastify()\n  await registerWebhook(server)\n  await server.listen({ port: 3000 })\n}\nmain()\n",
    )
  })

  it('the app made on a line with other code (express.json(), a Koa body parser): not edited, as no line of its own fits', async () => {
    for (const [stack, source, mountLine] of [
      [
        'express',
        "import express from 'express'\nconst app = express(); app.use(express.json())\n",
        "app.post('/hooks', webhook)",
      ],
      [
        'koa',
        "import Koa from 'koa'\nimport bodyParser from 'koa-bodyparser'\nconst app = new Koa(); app.use(bodyParser())\n",
        'app.use(webhook)',
      ],
    ] as const) {
      const result = await editAppFile({
        stack,
        file: 'index.js',
        esm: true,
        source,
        importLine: "import { webhook } from './affiliate-webhooks.js'",
        mountLine,
      })
      expect(result).toEqual({
        refused: expect.stringMatching(/other code shares the line where app is made/),
      })
    }
  })

  it('a CRLF file gets CRLF lines; a trailing comment on the app line is no obstacle', async () => {
    const result = await editAppFile({
      stack: 'express',
      file: 'index.js',
      esm: true,
      source:
        "import express from 'express'\r\nconst app = express() // the app\r\napp.use(express.json())\r\n",
      importLine: "import { webhook } from './affiliate-webhooks.js'",
      mountLine: "app.post('/hooks', webhook)",
    })
    expect('text' in result && result.text).toBe(
      "import express from 'express'\r\nimport { webhook } from './affiliate-webhooks.js'\r\nconst app = express() // the app\r\napp.post('/hooks', webhook)\r\napp.use(express.json())\r\n",
    )
  })

  it("does not edit the app's file to import a module it kept with other text (no --force)", async () => {
    const dir = copy('express-json')
    const plan = await withEdit(planInit(detectApp(dir, {})))
    const module = plan.files.find((file) => file.path.includes('affiliate-webhooks'))
    if (!module) throw new Error('no module in the plan')
    const before = read(dir, 'src/app.js')
    const applied = applyPlan({
      ...plan,
      files: plan.files.map((file) =>
        file === module ? { ...file, state: 'differs' as const } : file,
      ),
    })
    expect(applied.skipped).toEqual([module.path])
    expect(applied.notEdited).toEqual(['src/app.js'])
    expect(applied.edited).toEqual([])
    expect(read(dir, 'src/app.js')).toBe(before)
  })

  it('a .js file with import syntax in a package without "type" is edited as the ES module Node runs it as', async () => {
    const result = await editAppFile({
      stack: 'fastify',
      file: 'server.js',
      esm: false,
      source:
        "import { fastify } from 'fastify'\n\nconst server = fastify()\nawait server.listen({ port: 3000 })\n",
      importLine: "import { registerWebhook } from './affiliate-webhooks.mjs'",
      mountLine: 'await registerWebhook(app)',
    })
    expect('text' in result && result.text).toBe(
      "import { fastify } from 'fastify'\nimport { registerWebhook } from './affiliate-webhooks.mjs'\n\nconst server = fastify()\nawait registerWebhook(server)\nawait server.listen({ port: 3000 })\n",
    )
  })

  it('Nest on the Fastify platform: not edited, as the mount is Express middleware', async () => {
    const result = await editAppFile({
      stack: 'nest',
      file: 'src/main.ts',
      esm: false,
      source:
        "import { NestFactory } from '@nestjs/core'\nimport { FastifyAdapter } from '@nestjs/platform-fastify'\nimport { AppModule } from './app.module'\n\nasync function bootstrap() {\n  const app = await NestFactory.create(AppModule, new FastifyAdapter())\n  await app.listen(3000)\n}\nbootstrap()\n",
      importLine: "import { webhook } from './affiliate-webhooks'",
      mountLine: "app.use('/hooks', webhook)",
    })
    expect(result).toEqual({
      refused: "the app runs on Nest's Fastify platform, and the mount is Express middleware",
    })
  })
})

// Files init is not sure about: it leaves them alone and prints the lines, saying why.
const REFUSALS = [
  {
    case: 'Fastify in CommonJS (the mount needs await at the top level)',
    app: 'fastify-cjs',
    file: 'server.js',
    source: undefined,
    why: 'the mount needs await, which is not allowed where fastify is made (the top level of a CommonJS module)',
  },
  {
    case: 'the app made in another file',
    app: 'express-json',
    file: 'src/app.js',
    source: "import { makeApp } from './make-app.js'\n\nconst app = makeApp()\napp.listen(3000)\n",
    why: 'no app is made in this file (is it made in another one?)',
  },
  {
    case: 'two apps in one file',
    app: 'express-json',
    file: 'src/app.js',
    source:
      "import express from 'express'\n\nconst app = express()\nconst admin = express()\napp.use(express.json())\napp.listen(3000)\nadmin.listen(3001)\n",
    why: '2 apps are made in this file (app, admin): which one is not sure',
  },
  {
    case: 'a file that does not parse',
    app: 'express-json',
    file: 'src/app.js',
    source: "import express from 'express'\n\nconst app = express(\napp.listen(3000)\n",
    why: 'it does not parse (',
  },
  {
    case: 'a name init would add already taken',
    app: 'express-json',
    file: 'src/app.js',
    source:
      "import express from 'express'\n\nconst webhook = 1\nconst app = express()\napp.use(express.json())\napp.listen(webhook)\n",
    why: 'the name webhook is already used in the file',
  },
]

describe('init leaves the file alone when it is not sure, and prints the lines', () => {
  it.each(REFUSALS)('$case', async ({ app, file, source, why }) => {
    const dir = copy(app)
    if (source !== undefined) writeFileSync(join(dir, file), source)
    const before = read(dir, file)
    const result = await init(dir, '--yes')
    expect(result.code, result.stderr).toBe(0)
    const line = result.stdout.split('\n').find((l) => l.startsWith('  by hand '))
    expect(line).toContain(`  by hand ${file}: init did not edit it (${why}`)
    expect(result.stdout).toMatch(
      /^ {4}\+ import \{ (webhook|registerWebhook) \} from '\.\/affiliate-webhooks\.\w+'$/m,
    )
    expect(result.stdout).not.toMatch(/^ {2}edit /m)
    expect(read(dir, file)).toBe(before)
  })

  it('a stack init does not edit (node:http) still prints the lines, saying so', async () => {
    const dir = copy('plain-node')
    const result = await init(dir, '--dry-run')
    expect(result.stdout).toMatch(
      /^ {2}by hand \S+: init did not edit it \(init does not edit a node:http app's file\); add, /m,
    )
  })
})

describe('an edited Express app with express.json() mounted globally, on a real socket', () => {
  // Inside the workspace (.tmp/ is git-ignored), so express and the packages resolve by name.
  const root = new URL('../../', import.meta.url).pathname
  mkdirSync(join(root, '.tmp'), { recursive: true })
  const inside = mkdtempSync(join(root, '.tmp', 'init-edit-'))
  let server: ChildProcess | undefined
  afterAll(async () => {
    if (server?.exitCode === null) {
      server.kill('SIGTERM')
      await once(server, 'exit')
    }
    rmSync(inside, { recursive: true, force: true })
  })

  it('takes a signed event at /hooks (before the JSON parser) and still parses JSON on its own routes', async () => {
    const dir = copy('express-json', inside)
    const done = await init(dir, '--yes', '--store', 'memory')
    expect(done.code, done.stderr).toBe(0)
    const secret = 'whsec_init_edit_test_secret_0123456789'
    const port = await freePort()
    server = spawn(process.execPath, ['src/app.js'], {
      cwd: dir,
      env: { ...process.env, PORT: String(port), AFFILIATE_WEBHOOK_SECRET: secret },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    await new Promise<void>((resolve, reject) => {
      server?.stdout?.once('data', () => resolve())
      server?.once('exit', (code) => reject(new Error(`the app exited ${code} before it listened`)))
    })
    const url = `http://127.0.0.1:${port}`
    const event = buildConversionEvent({ type: 'conversion.created' })
    const delivery = await signedDelivery({ secret, event })
    const handled = await fetch(`${url}/hooks`, {
      method: 'POST',
      headers: delivery.headers,
      body: delivery.body,
    })
    expect(handled.status, await handled.text()).toBe(200)
    const again = await fetch(`${url}/hooks`, {
      method: 'POST',
      headers: delivery.headers,
      body: delivery.body,
    })
    expect(again.status).toBe(200)
    const forged = await signedDelivery({ secret: 'whsec_not_the_secret_0123456789abcdef', event })
    const refused = await fetch(`${url}/hooks`, {
      method: 'POST',
      headers: forged.headers,
      body: forged.body,
    })
    expect(refused.status).toBe(401)
    const echo = await fetch(`${url}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    })
    expect(await echo.json()).toEqual({ got: { a: 1 } })
  }, 60_000)
})

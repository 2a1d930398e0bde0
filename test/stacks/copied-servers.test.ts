/**
 * The examples that run from source (tsx, no build step) copied out of the
 * repository as a user copies them: each into a folder of its own outside the
 * workspace, its `@affiliate-webhooks/*` dependencies installed by name from the
 * run's local registry, with plain `npm install` (failing on any peer or engine
 * warning), then run with the commands its README gives. A copy that still
 * reached into the repository (a workspace link, a relative import, a tsconfig
 * `extends`) fails to install or to start here.
 *
 * The built stacks (Astro, SvelteKit, React Router, Nuxt, Nitro, Elysia, Cloud
 * Functions) are copied out by their own tests in this folder; Next runs from the
 * repository in its own. The Azure Functions example is installed and built here;
 * serving it takes the Functions host (Core Tools, `func start`), which does not
 * install from the npm registry alone, so its requests run through the in-process
 * host of azure-functions.test.ts. The Netlify and Vercel functions have no
 * server of their own outside the platforms' CLIs (which need the network): the
 * copy's function files, with the copy's own installed packages, are served here
 * as those platforms' Node runtimes serve them. The queue and postgres-drizzle examples run
 * against the machine's Redis and a Postgres database of the test's own.
 */
import { randomUUID } from 'node:crypto'
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { serve as serveListener, webToNode } from '../support/conformance-adapters.js'
import { createPostgresTestDatabase } from '../support/postgres-db.js'
import { freePort, REDIS_URL } from '../support/redis-servers.js'
import {
  lockedVersion,
  npmInstall,
  pointAtRegistry,
  root,
  run,
  startDetached,
  stopGroup,
} from './copied-example.js'

/** Each example, and the packages pinned at the versions the repository's lockfile installed. */
const EXAMPLES = {
  express: ['express'],
  fastify: ['fastify'],
  node: [],
  'nest-fastify': ['@nestjs/core', '@nestjs/platform-fastify'],
  otel: ['@opentelemetry/sdk-trace-base'],
  queue: ['bullmq', 'ioredis'],
  'postgres-drizzle': ['drizzle-orm', 'kysely', 'pg', 'postgres'],
  'azure-functions': ['@azure/functions'],
  functions: [],
} as const satisfies Record<string, readonly string[]>
type Example = keyof typeof EXAMPLES

const SKIP = /[\\/](node_modules|dist)$/
// Deep on purpose: nothing may depend on where the copy lives.
const work = mkdtempSync(join(tmpdir(), 'aw-copied-'))
const nest = join(work, 'a', 'b', 'c')
const apps = new Map<Example, string>()
const SECRET = 'whsec_copied_examples_secret'

/** The test's environment without the repository's npm script variables or a secret of its own. */
function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: Record<string, string | undefined> = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (name.startsWith('npm_') && name !== 'npm_config_cache') continue
    if (name === 'AFFILIATE_WEBHOOK_SECRET' || name === 'REDIS_URL' || name === 'INIT_CWD') continue
    env[name] = value
  }
  return { ...env, ...extra } as NodeJS.ProcessEnv
}

/** `npm run <script>` in the copy, in its own process group, its output kept. */
function startScript(example: Example, env: NodeJS.ProcessEnv, script = 'start') {
  const child = startDetached(apps.get(example) as string, env, script)
  let log = ''
  child.stdout?.on('data', (chunk) => {
    log += chunk
  })
  child.stderr?.on('data', (chunk) => {
    log += chunk
  })
  return { child, log: () => log }
}

/** `npm start` (or `script`) in the copy on a free port; resolves once it answers HTTP. */
async function serve(example: Example, extra: Record<string, string> = {}, script = 'start') {
  const port = await freePort()
  const { child, log: output } = startScript(
    example,
    userEnv({ PORT: String(port), ...extra }),
    script,
  )
  const log = () => output()
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${example} exited ${child.exitCode}:\n${log()}`)
    const answered = await fetch(`http://127.0.0.1:${port}/__ready`)
      .then((response) => response.arrayBuffer())
      .then(
        () => true,
        () => false,
      )
    if (answered) return { port, log, stop: () => stopGroup(child) }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  await stopGroup(child)
  throw new Error(`${example} did not answer within 60 s:\n${log()}`)
}

afterAll(() => rmSync(work, { recursive: true, force: true }))

beforeAll(async () => {
  for (const example of Object.keys(EXAMPLES) as Example[]) {
    const app = join(nest, example)
    cpSync(join(root, 'examples', example), app, {
      recursive: true,
      filter: (source) => !SKIP.test(source),
    })
    apps.set(example, app)
  }
  // The installs wait on the cache and the disk more than on the CPU: all at once.
  const entries = Object.entries(EXAMPLES) as [Example, readonly string[]][]
  await Promise.all(
    entries.map(async ([example, pinned]) => {
      const app = apps.get(example) as string
      await pointAtRegistry(
        app,
        Object.fromEntries(pinned.map((name) => [name, lockedVersion(example, name)])),
      )
      await npmInstall(app, userEnv())
    }),
  )
}, 600_000)

describe.each(['express', 'fastify', 'node'] as const)(
  'examples/%s copied out: npm start, then npm run send',
  (example) => {
    it('answers the signed delivery 200 and lists the conversion', async () => {
      const server = await serve(example)
      try {
        const sent = await run(
          ['npm', 'run', 'send', '--silent'],
          apps.get(example) as string,
          userEnv({ PORT: String(server.port) }),
        )
        expect(sent).toMatch(/POST \/hooks evt_\w+: 200/)
        // The table starts empty in a new process: a row means the handler ran.
        expect(sent).toMatch(/updatedAt: '\d{4}-/)
      } finally {
        await server.stop()
      }
    }, 120_000)
  },
)

describe('examples/nest-fastify copied out: npm start', () => {
  it('answers a signed delivery 200, the same bytes tampered 401', async () => {
    const server = await serve('nest-fastify', { AFFILIATE_WEBHOOK_SECRET: SECRET })
    try {
      const url = `http://127.0.0.1:${server.port}/hooks`
      const { headers, body } = await signedDelivery({
        secret: SECRET,
        event: buildConversionEvent(),
      })
      const ok = await fetch(url, { method: 'POST', headers, body })
      expect(ok.status, await ok.text()).toBe(200)
      const tampered = await fetch(url, { method: 'POST', headers, body: body.replace('}', ' }') })
      expect(tampered.status).toBe(401)
      expect((await tampered.json()).error.code).toBe('signature_mismatch')
    } finally {
      await server.stop()
    }
  }, 120_000)
})

describe('examples/otel copied out: npm start', () => {
  it('prints the receiver span and the deliveries metric', async () => {
    const output = await run(['npm', 'start', '--silent'], apps.get('otel') as string, userEnv())
    expect(output).toContain('affiliate_webhook.receive')
    expect(output).toContain('affiliate_webhook.deliveries')
  }, 120_000)
})

describe('examples/queue copied out: npm run receiver, npm run worker', () => {
  it('answers a signed delivery 200 queued, and the worker runs its handler once', async () => {
    // The example's own Redis, queue and store prefix; a queue of this test's own.
    const queueName = `aw-copied-${randomUUID().slice(0, 8)}`
    const env = { AFFILIATE_WEBHOOK_SECRET: SECRET, QUEUE_NAME: queueName, SLOW_MS: '10' }
    const receiver = await serve('queue', { ...env, REDIS_URL }, 'receiver')
    const worker = startScript('queue', userEnv({ ...env, REDIS_URL }), 'worker')
    const event = buildConversionEvent()
    const redis = new Redis(REDIS_URL)
    try {
      const { headers, body } = await signedDelivery({ secret: SECRET, event })
      const url = `http://127.0.0.1:${receiver.port}/hooks`
      const answer = await fetch(url, { method: 'POST', headers, body })
      expect(answer.status).toBe(200)
      expect(await answer.json()).toEqual({ received: true, outcome: 'queued' })
      await vi.waitFor(() => expect(worker.log()).toContain(`${event.id} done (try 1)`), {
        timeout: 60_000,
        interval: 100,
      })
      const again = await fetch(url, { method: 'POST', headers, body })
      expect(await again.json()).toEqual({ received: true, outcome: 'duplicate' })
      expect(worker.log().split(`${event.id} conversion`)).toHaveLength(2)
    } finally {
      await stopGroup(worker.child)
      await receiver.stop()
      const keys = [
        ...(await redis.keys(`bull:${queueName}:*`)),
        ...(await redis.keys(`example-queue:{c:${event.data.conversion.id}}*`)),
      ]
      if (keys.length > 0) await redis.del(...keys)
      redis.disconnect()
    }
  }, 120_000)
})

describe.each([
  { script: 'start', recipe: 'Drizzle on pg' },
  { script: 'start:postgres-js', recipe: 'Drizzle on postgres.js' },
  { script: 'start:kysely', recipe: 'Kysely on pg' },
])('examples/postgres-drizzle copied out: npm run $script ($recipe)', ({ script }) => {
  it('credits the ledger once, and not at all for a handler that threw', async () => {
    const db = await createPostgresTestDatabase()
    try {
      const output = await run(
        ['npm', 'run', script, '--silent'],
        apps.get('postgres-drizzle') as string,
        userEnv({ DATABASE_URL: db.url }),
      )
      expect(output).toContain('--- a new event: 200 {"received":true,"outcome":"processed"}')
      expect(output).toContain(
        '--- the same event again: 200 {"received":true,"outcome":"duplicate"}',
      )
      expect(output).toMatch(/--- a handler that throws after its insert: 500 .*handler_failed/)
      const { rows } = await db.pool.query('SELECT conversion_id, commission FROM example_ledger')
      expect(rows).toEqual([{ conversion_id: '8101', commission: '12.50' }])
    } finally {
      await db.drop()
    }
  }, 120_000)
})

describe('examples/azure-functions copied out: npm install, npm run build', () => {
  it('builds dist/functions/hooks.js, which loads and registers its function', async () => {
    const app = apps.get('azure-functions') as string
    await run(['npm', 'run', 'build', '--silent'], app, userEnv())
    // Outside the host @azure/functions registers nothing and says so: the module
    // and everything it imports loaded from the copy's own node_modules.
    const output = await run(
      [
        process.execPath,
        '--input-type=module',
        '-e',
        "await import('./dist/functions/hooks.js'); console.log('hooks.js loaded')",
      ],
      app,
      userEnv({ AFFILIATE_WEBHOOK_SECRET: SECRET }),
    )
    expect(output).toContain('hooks.js loaded')
    expect(output).toMatch(/register function "hooks"/)
  }, 120_000)
})

describe('examples/functions copied out: npm install, each function file served', () => {
  it.each([
    ['Netlify', 'netlify/functions/hooks.ts', 'default'],
    ['Vercel', 'api/hooks.ts', 'POST'],
  ])(
    '%s (%s): a signed delivery 200 and stored, the same bytes tampered 401',
    async (_platform, file, name) => {
      const app = apps.get('functions') as string
      vi.stubEnv('AFFILIATE_WEBHOOK_SECRET', SECRET)
      vi.resetModules()
      // The copy's own files, resolving @affiliate-webhooks/web in the copy's node_modules.
      const fn = (await import(join(app, file)))[name] as (request: Request) => Promise<Response>
      const { conversions } = await import(join(app, 'src/webhook.ts'))
      const server = await serveListener(webToNode(fn))
      try {
        const event = buildConversionEvent()
        const { headers, body } = await signedDelivery({ secret: SECRET, event })
        const ok = await fetch(server.url, { method: 'POST', headers, body })
        expect(ok.status, await ok.text()).toBe(200)
        expect(conversions.get(event.data.conversion.id)?.status).toBe(event.data.conversion.status)
        const tampered = await fetch(server.url, {
          method: 'POST',
          headers,
          body: body.replace('}', ' }'),
        })
        expect(tampered.status).toBe(401)
        expect((await tampered.json()).error.code).toBe('signature_mismatch')
      } finally {
        vi.unstubAllEnvs()
        await server.close()
      }
    },
    60_000,
  )
})

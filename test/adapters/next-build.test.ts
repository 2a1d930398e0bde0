/**
 * The real thing for Next.js: `next build` of examples/next (offline), `next start`
 * on a free port, and signed deliveries to its App Router routes (Node and Edge
 * runtimes) and its Pages API route. Next 16, the current major, runs on a copy
 * out of the repository as a user copies it: a deep temporary folder, its
 * `@affiliate-webhooks/*` dependencies pointed at the packed tarballs, `npm install`
 * (no peer or engine warning), `npm run build`, `next start`. Next 15 runs on a
 * copy inside the workspace with the aliased `next15`. Runs in its own vitest
 * project, after the others, so the build does not compete with them for the CPU.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { buildConversionEvent } from '@affiliate-webhooks/core/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { lockedVersion, npmInstall, pointAtRegistry } from '../stacks/copied-example.js'
import { SECRET, send, streamOversize } from '../support/conformance-cases.js'
import { type RedisServer, startRedis } from '../support/redis-servers.js'

const root = fileURLToPath(new URL('../..', import.meta.url))

/**
 * The copy's `@affiliate-webhooks/*` dependencies by name from the run's local
 * registry, Next, React and the types at the versions the lockfile installed, then
 * `npm install` (without NODE_ENV=production, which would leave the devDependencies out).
 */
async function copiedOut(app: string, env: NodeJS.ProcessEnv): Promise<void> {
  const pinned = ['next', 'react', 'react-dom', '@types/node', '@types/react', 'typescript']
  await pointAtRegistry(
    app,
    Object.fromEntries(pinned.map((name) => [name, lockedVersion('next', name)])),
  )
  const { NODE_ENV: _production, ...installEnv } = env
  const seconds = await npmInstall(app, installEnv as NodeJS.ProcessEnv)
  console.log(`Next: examples/next copied out, npm install ${seconds.toFixed(1)} s`)
}
// The peer range claims Next 15 and 16: both are built and run for real.
for (const { major, pkg } of [
  { major: 16, pkg: 'next' },
  { major: 15, pkg: 'next15' },
]) {
  describe(`Next ${major}`, () => {
    // Another major is installed under an alias (next15); it is built in a copy under
    // .tmp/ (git-ignored, inside the workspace so the other packages resolve), which
    // gets it as a real node_modules/next (a link would resolve its own `next/...`
    // imports from its real path, onto the hoisted next). The current major is copied
    // out of the repository, deep on purpose: nothing may depend on where it lives.
    const aliased = pkg !== 'next'
    mkdirSync(join(root, '.tmp'), { recursive: true })
    const work = aliased
      ? mkdtempSync(join(root, '.tmp', 'next-example-'))
      : mkdtempSync(join(tmpdir(), 'aw-next-'))
    const app = aliased ? work : join(work, 'a', 'b', 'next')
    const nextBin = join(app, 'node_modules/next/dist/bin/next')

    // Where the sandbox allows it, the build runs in a network namespace with no network at all.
    const offline = spawnSync('unshare', ['-n', 'true']).status === 0

    const env = (extra: Record<string, string>): NodeJS.ProcessEnv => {
      const { AFFILIATE_WEBHOOK_SECRET: _ignored, REDIS_URL: _chosenBelow, ...rest } = process.env
      return { ...rest, NODE_ENV: 'production', NEXT_TELEMETRY_DISABLED: '1', ...extra }
    }

    /** Runs a command to its end; rejects with its output when it fails. */
    async function run(command: string, args: string[], options: { env: NodeJS.ProcessEnv }) {
      const child = spawn(command, args, { cwd: app, env: options.env, stdio: 'pipe' })
      let output = ''
      child.stdout.on('data', (chunk) => {
        output += chunk
      })
      child.stderr.on('data', (chunk) => {
        output += chunk
      })
      const [code] = await once(child, 'exit')
      if (code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${code}:\n${output}`)
      return output
    }

    /** Starts `next start` on port 0 and resolves with its URL once it says it is ready. */
    async function start(): Promise<{ server: ChildProcess; base: string }> {
      const server = spawn(
        process.execPath,
        [nextBin, 'start', '--port', '0', '--hostname', '127.0.0.1'],
        {
          cwd: app,
          env: env({ AFFILIATE_WEBHOOK_SECRET: SECRET, REDIS_URL: redis.url }),
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      )
      let log = ''
      server.stderr?.on('data', (chunk) => {
        log += chunk
      })
      const base = await new Promise<string>((resolve, reject) => {
        let url: string | undefined
        const lines = createInterface({ input: server.stdout as NodeJS.ReadableStream })
        lines.on('line', (line) => {
          log += `${line}\n`
          url ??= /Local:\s+(http:\/\/\S+)/.exec(line)?.[1]
          if (url !== undefined && /Ready/.test(line)) resolve(url)
        })
        server.once('exit', (code) => reject(new Error(`next start exited ${code}:\n${log}`)))
      })
      return { server, base }
    }

    let server: ChildProcess | undefined
    let base = ''
    // The app runs with REDIS_URL set, on a Redis of its own so runs never share state.
    let redis: RedisServer

    beforeAll(async () => {
      redis = await startRedis()
      cpSync(join(root, 'examples/next'), app, {
        recursive: true,
        filter: (source) => !/[\\/](\.next|node_modules|next-env\.d\.ts)$/.test(source),
      })
      // The copy resolves `next` to the major under test; everything else from the root.
      if (aliased) {
        cpSync(join(root, 'node_modules', pkg), join(app, 'node_modules/next'), { recursive: true })
      } else {
        await copiedOut(app, env({}))
      }
      const started = performance.now()
      // No AFFILIATE_WEBHOOK_SECRET at build time, as in many CI pipelines.
      const build = [process.execPath, nextBin, 'build']
      if (offline) await run('unshare', ['-n', ...build], { env: env({}) })
      else await run(build[0] as string, build.slice(1), { env: env({}) })
      console.log(
        `Next ${major}: next build of examples/next: ${((performance.now() - started) / 1000).toFixed(1)} s`,
      )
      ;({ server, base } = await start())
    }, 240_000)

    afterAll(async () => {
      if (server && server.exitCode === null) {
        const exited = once(server, 'exit')
        server.kill('SIGTERM')
        await exited
      }
      rmSync(work, { recursive: true, force: true })
      await redis?.stop()
    })

    describe(`Next ${major}: examples/next built with next build${offline ? ' (no network)' : ''} and run with next start`, () => {
      // `stopsEarly`: the answer comes while the body is still arriving. Not on Edge
      // under `next start`, whose sandbox takes the whole body before the route runs.
      describe.each([
        { name: 'App Router route, Node runtime', path: '/api/hooks', stopsEarly: true },
        { name: 'App Router route, Edge runtime', path: '/api/edge-hooks', stopsEarly: false },
        { name: 'Pages API route (bodyParser: false)', path: '/api/pages-hooks', stopsEarly: true },
      ])('$name', ({ path, stopsEarly }) => {
        it('answers processed, then duplicate; refuses a tampered body', async () => {
          const url = `${base}${path}`
          const event = buildConversionEvent({ conversion: { commission: '0.00' } })
          expect(await send(url, event)).toMatchObject({
            status: 200,
            json: { outcome: 'processed' },
          })
          expect(await send(url, event, { attempt: 2 })).toMatchObject({
            status: 200,
            json: { outcome: 'duplicate' },
          })
          const tampered = await send(
            url,
            buildConversionEvent({ conversion: { commission: '0.00' } }),
            {
              tamper: (body) => body.replace('"0.00"', '"8.00"'),
            },
          )
          expect(tampered).toMatchObject({
            status: 401,
            json: { error: { code: 'signature_mismatch' } },
          })
        })

        it('verifies multi-byte UTF-8 bodies', async () => {
          const event = buildConversionEvent()
          const answer = await send(`${base}${path}`, {
            ...event,
            data: { ...event.data, note: 'Café 東京 — 🎉' },
          })
          expect(answer).toMatchObject({ status: 200, json: { outcome: 'processed' } })
        })

        it(`answers 413 to a chunked oversize body${stopsEarly ? ' before it is all sent' : ''}`, async () => {
          // 3.2 MB against the default 1 MiB limit.
          const { status, code, sent, reset } = await streamOversize(`${base}${path}`, 200)
          expect(status).toBe(413)
          // Unless a connection reset took the body with it (see streamOversize).
          if (!reset) expect(code).toBe('payload_too_large')
          if (stopsEarly) expect(sent).toBeLessThan(200)
        })

        it('does not answer a GET with 2xx', async () => {
          // App routes: Next itself answers 405 for a method the route does not export.
          const response = await fetch(`${base}${path}`)
          expect(response.status).toBe(405)
        })
      })

      it('with REDIS_URL set, shares de-duplication between routes (separate bundles) through Redis', async () => {
        const event = buildConversionEvent({
          conversion: { id: 870_000 + Math.floor(Math.random() * 10_000) },
        })
        expect((await send(`${base}/api/hooks`, event)).json.outcome).toBe('processed')
        // The Pages route is another bundle with its own memory; only Redis knows the event.
        expect((await send(`${base}/api/pages-hooks`, event, { attempt: 2 })).json.outcome).toBe(
          'duplicate',
        )
        const keys = spawnSync(
          'redis-cli',
          ['-p', String(redis.port), '--scan', '--pattern', 'aw:*done*'],
          {
            encoding: 'utf8',
          },
        )
        expect(keys.stdout).toContain(event.id)
      })

      it('upserts into the conversions table, and an older update arriving late is stale', async () => {
        const created = Date.now() - 3_600_000
        const id = 880_000 + Math.floor(Math.random() * 10_000)
        const approved = buildConversionEvent({
          type: 'conversion.updated',
          createdAt: created + 60_000,
          conversion: { id, status: 'approved' },
        })
        const pending = buildConversionEvent({
          createdAt: created,
          conversion: { id, status: 'pending' },
        })
        expect((await send(`${base}/api/hooks`, approved)).json.outcome).toBe('processed')
        expect((await send(`${base}/api/hooks`, pending)).json.outcome).toBe('stale')
        const pagesEvent = buildConversionEvent({ conversion: { id: id + 1, status: 'pending' } })
        expect((await send(`${base}/api/pages-hooks`, pagesEvent)).json.outcome).toBe('processed')

        const table = (await (await fetch(`${base}/api/conversions`)).json()) as {
          id: number
          status: string
        }[]
        expect(table.find((row) => row.id === id)?.status).toBe('approved')
        expect(table.find((row) => row.id === id + 1)?.status).toBe('pending')
      })
    })
  })
}

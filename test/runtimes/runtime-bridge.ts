/**
 * Runs the conformance cases against the web handler inside Bun, Deno and workerd.
 * The adapter, the core and its memory store run in the runtime under test; the
 * case's handler and logger stay here, reached over loopback HTTP: the runtime's
 * `onConversion` posts to this bridge, which runs the case's own handler and
 * answers 500 if it threw. See test/runtimes/bridged-options.mjs for the other end.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { fileURLToPath } from 'node:url'
import type { ConversionEvent, ReceiverOptions } from '@affiliate-webhooks/core'
import { build } from 'esbuild'
import { Miniflare } from 'miniflare'
import { type Adapter, type Running, serve } from '../support/conformance-adapters.js'

export type Framework = 'web' | 'hono'

/** The start-up warning a memory store gives on Workers, kept apart from the case's lines. */
export const startupWarnings: string[] = []
const STARTUP_WARNING = /the memory store lives in one /

/** What the runtime needs to build the case's receiver: data only. */
export interface BridgeConfig {
  secret: string
  maxBodyBytes?: number
  logger: boolean
  bridge: string
  framework: Framework
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return JSON.parse(Buffer.concat(chunks).toString('utf8'))
}

/** The loopback server the runtime calls for the handler and the logger. */
export async function startBridge(options: ReceiverOptions, framework: Framework) {
  const { secret, maxBodyBytes, logger, onConversion, ...rest } = options
  const unsupported = Object.keys(rest).filter(
    (key) => rest[key as keyof typeof rest] !== undefined,
  )
  if (unsupported.length > 0 || typeof secret !== 'string') {
    throw new Error(`the runtime bridge cannot carry these options: ${unsupported.join(', ')}`)
  }
  const state = { warming: false }
  const running = await serve(async (req: IncomingMessage, res: ServerResponse) => {
    const body = (await readJson(req)) as Record<string, unknown>
    if (req.url === '/log') {
      for (const { level, line } of body as unknown as {
        level: 'warn' | 'error'
        line: string
      }[]) {
        if (STARTUP_WARNING.test(line)) startupWarnings.push(line)
        else if (logger && !state.warming) logger[level](line)
      }
      res.writeHead(204).end()
      return
    }
    try {
      const { conversion, event } = body as { conversion: never; event: ConversionEvent }
      await onConversion?.(conversion, event as never, {} as never)
      res.writeHead(204).end()
    } catch (error) {
      res.writeHead(500).end(error instanceof Error ? error.message : String(error))
    }
  }, '')
  const config: BridgeConfig = {
    secret,
    logger: logger !== false,
    bridge: running.url,
    framework,
    ...(maxBodyBytes === undefined ? {} : { maxBodyBytes }),
  }
  return {
    config,
    close: running.close,
    /** While true, the runtime's lines are not the case's (a harness request). */
    set warming(value: boolean) {
      state.warming = value
    },
  }
}

const root = new URL('../../', import.meta.url)
const serveScript = fileURLToPath(new URL('test/runtimes/serve.mjs', root))

/** A runtime binary installed from npm as a dev dependency; missing means failing, never skipped. */
export function runtimeBinary(name: 'bun' | 'deno'): string {
  const path = fileURLToPath(new URL(`node_modules/.bin/${name}`, root))
  if (!existsSync(path)) throw new Error(`${name} is not installed: run npm ci (${path})`)
  return path
}

const ARGS = {
  bun: ['run', serveScript],
  deno: [
    'run',
    '--quiet',
    '--no-lock',
    '--node-modules-dir=manual',
    '--allow-net=127.0.0.1',
    '--allow-env',
    '--allow-read',
    serveScript,
  ],
}

/** Starts test/runtimes/serve.mjs under Bun or Deno and waits for its port. */
async function spawnServer(runtime: 'bun' | 'deno', config: BridgeConfig) {
  const child: ChildProcess = spawn(runtimeBinary(runtime), ARGS[runtime], {
    cwd: fileURLToPath(root),
    env: { ...process.env, CONFIG: JSON.stringify(config), DENO_NO_UPDATE_CHECK: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr?.on('data', (chunk) => {
    stderr += String(chunk)
  })
  const port = await new Promise<number>((resolve, reject) => {
    let stdout = ''
    child.stdout?.on('data', (chunk) => {
      stdout += String(chunk)
      const line = stdout.split('\n').find((l) => l.startsWith('{'))
      if (line) resolve((JSON.parse(line) as { port: number }).port)
    })
    child.once('exit', (code) =>
      reject(new Error(`${runtime} exited with ${code} before listening:\n${stderr}`)),
    )
  })
  return {
    port,
    close: async () => {
      if (child.exitCode !== null) return
      const exited = once(child, 'exit')
      child.kill('SIGKILL')
      await exited
    },
  }
}

/** The web handler (alone or on Hono) served by Bun.serve or Deno.serve. */
export function processRuntime(runtime: 'bun' | 'deno', framework: Framework): Adapter {
  return {
    name: `${framework} on ${runtime === 'bun' ? 'Bun (Bun.serve)' : 'Deno (Deno.serve)'}`,
    // The 413 (Connection: close) ends a connection whose body is left unread; once,
    // in a CI run, the client on Bun saw the reset and not the answer.
    ...(runtime === 'bun' ? { resetsWithoutAnswer: true } : {}),
    start: async (options): Promise<Running> => {
      const bridge = await startBridge(options, framework)
      try {
        const server = await spawnServer(runtime, bridge.config)
        return {
          url: `http://127.0.0.1:${server.port}/hooks`,
          close: async () => {
            await server.close()
            await bridge.close()
          },
        }
      } catch (error) {
        await bridge.close()
        throw error
      }
    },
  }
}

/** The Worker's service binding: each of its requests goes on to the bridge. */
function forwardTo(bridgeUrl: string) {
  return async (request: { url: string; text(): Promise<string> }): Promise<Response> => {
    const path = new URL(request.url).pathname
    const answer = await fetch(`${bridgeUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: await request.text(),
    })
    const text = await answer.text()
    return new Response(answer.status === 204 ? null : text, { status: answer.status })
  }
}

let workerScript: Promise<string> | undefined

/**
 * test/runtimes/worker.mjs bundled as Wrangler would: the `workerd`/`worker`
 * export conditions, no Node built-ins (a `node:` import fails the build).
 */
export function bundleWorker(): Promise<string> {
  workerScript ??= build({
    entryPoints: [fileURLToPath(new URL('test/runtimes/worker.mjs', root))],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    target: 'es2022',
    logLevel: 'silent',
  }).then((result) => result.outputFiles[0]?.text ?? '')
  return workerScript
}

/** The web handler (alone or on Hono) as a Worker, run by workerd through Miniflare. */
export function workerdRuntime(framework: Framework): Adapter {
  return {
    name: `${framework} on workerd (Miniflare)`,
    resetsWithoutAnswer: true,
    start: async (options): Promise<Running> => {
      const bridge = await startBridge(options, framework)
      const bridgeUrl = bridge.config.bridge
      const mf = new Miniflare({
        modules: true,
        script: await bundleWorker(),
        compatibilityDate: '2026-04-01',
        host: '127.0.0.1',
        port: 0,
        bindings: { CONFIG: JSON.stringify(bridge.config), FRAMEWORK: framework },
        serviceBindings: {
          BRIDGE: forwardTo(bridgeUrl) as never,
        },
      })
      const url = await mf.ready
      // A cold isolate's first 413 to a client still sending was, now and then,
      // a connection reset with no answer (about 1 in 10 here); later ones never.
      // Deployed Workers are warm after their first request; so is this one: a GET
      // (405) makes the case's receiver, and its lines are not the case's.
      bridge.warming = true
      await (await fetch(new URL('/hooks', url))).arrayBuffer()
      bridge.warming = false
      return {
        url: new URL('/hooks', url).href,
        close: async () => {
          await mf.dispose()
          await bridge.close()
        },
      }
    },
  }
}

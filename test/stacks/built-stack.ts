/**
 * One framework's example, built for real and served by the framework's own
 * server, as a conformance `Adapter`: the example is copied under .tmp/ (inside the
 * workspace, so its packages resolve), its webhook module is swapped for one that
 * takes each case's options from a file (test/stacks/apps/), the build runs once
 * (offline where the sandbox allows it), and the built server starts once on a free
 * port. Each case writes its options to that file (a fresh receiver and memory
 * store) and gets its handler calls and log lines over the loopback bridge of
 * test/runtimes/runtime-bridge.ts, as Bun and Deno do.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { once } from 'node:events'
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { createServer } from 'node:net'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startBridge } from '../runtimes/runtime-bridge.js'
import type { Adapter, Running } from '../support/conformance-adapters.js'

export const root = fileURLToPath(new URL('../..', import.meta.url))
const apps = fileURLToPath(new URL('./apps/', import.meta.url))
const bridgeOptions = fileURLToPath(new URL('../support/bridge-options.mjs', import.meta.url))

/** Build outputs and installs never copied from the example into the test's copy. */
const SKIP = /[\\/](node_modules|dist|build|\.output|\.astro|\.nuxt|\.svelte-kit|\.react-router)$/

export interface StackRecipe {
  /** The example under examples/. */
  example: string
  /** [file under test/stacks/apps, where it goes in the copy]: the swapped webhook module first. */
  files: [string, string][]
  /** The build, run in the copy: argv. */
  build: string[]
  /** The built server, run in the copy with PORT and HOST set: argv. */
  serve: string[]
  /** The route the example serves the webhook on. */
  path: string
  /** See `Adapter.refusesPostWithoutContentType`. */
  refusesPostWithoutContentType?: number
  /** See `Adapter.resetsWithoutAnswer`. */
  resetsWithoutAnswer?: boolean
}

/** Where the sandbox allows it, builds run in a network namespace with no network at all. */
export const offline = spawnSync('unshare', ['-n', 'true']).status === 0

function baseEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const { AFFILIATE_WEBHOOK_SECRET: _unused, ...rest } = process.env
  return {
    ...rest,
    NODE_ENV: 'production',
    ASTRO_TELEMETRY_DISABLED: '1',
    NUXT_TELEMETRY_DISABLED: '1',
    NEXT_TELEMETRY_DISABLED: '1',
    DO_NOT_TRACK: '1',
    ...extra,
  }
}

/** Runs a command to its end in `cwd`; rejects with its output when it fails. */
async function run(argv: string[], cwd: string): Promise<void> {
  const [command, ...args] = offline ? ['unshare', '-n', ...argv] : argv
  const child = spawn(command as string, args, { cwd, env: baseEnv({}), stdio: 'pipe' })
  let output = ''
  child.stdout.on('data', (chunk) => {
    output += chunk
  })
  child.stderr.on('data', (chunk) => {
    output += chunk
  })
  const [code] = await once(child, 'exit')
  if (code !== 0) throw new Error(`${argv.join(' ')} exited ${code}:\n${output.slice(-4000)}`)
}

async function freePort(): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  server.close()
  await once(server, 'close')
  return port
}

/** Resolves once the server answers anything over HTTP; rejects if it exits first. */
async function ready(child: ChildProcess, base: string, log: () => string): Promise<void> {
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`the server exited ${code} before answering:\n${log().slice(-4000)}`)
  })
  const deadline = Date.now() + 30_000
  const poll = async (): Promise<void> => {
    while (Date.now() < deadline) {
      try {
        await (await fetch(`${base}/__ready`, { signal: AbortSignal.timeout(1_000) })).arrayBuffer()
        return
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }
    throw new Error(`the server did not answer within 30 s:\n${log().slice(-4000)}`)
  }
  await Promise.race([poll(), exited])
}

export interface BuiltStack {
  /** Copies and builds the example; resolves with the build's seconds. */
  build(): Promise<number>
  /** The conformance adapter: the built server, started on the first case, with the case's options. */
  adapter(name: string): Adapter
  /** Stops the server and removes the copy. */
  remove(): Promise<void>
}

/** The example of `recipe`, built in a copy of its own. */
export function builtStack(recipe: StackRecipe): BuiltStack {
  let app = ''
  let configFile = ''
  let server: Promise<{ base: string; close(): Promise<void> }> | undefined
  const serve = async (env: Record<string, string>) => {
    const port = await freePort()
    const [command, ...args] = recipe.serve
    const child = spawn(command as string, args, {
      cwd: app,
      env: baseEnv({ PORT: String(port), HOST: '127.0.0.1', ...env }),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let log = ''
    child.stdout?.on('data', (chunk) => {
      log += chunk
    })
    child.stderr?.on('data', (chunk) => {
      log += chunk
    })
    const base = `http://127.0.0.1:${port}`
    let closing = false
    // A server that dies mid-run fails every later case: its last words say why.
    child.once('exit', (code, signal) => {
      if (!closing)
        console.error(`${recipe.example} server exited (${code ?? signal}):\n${log.slice(-4000)}`)
    })
    const close = async () => {
      closing = true
      if (child.exitCode !== null || child.signalCode !== null) return
      const exited = once(child, 'exit')
      child.kill('SIGKILL')
      await exited
    }
    try {
      await ready(child, base, () => log)
    } catch (error) {
      await close()
      throw error
    }
    return { base, close }
  }
  return {
    async build() {
      mkdirSync(join(root, '.tmp'), { recursive: true })
      app = mkdtempSync(join(root, '.tmp', `${recipe.example}-`))
      configFile = join(app, 'bridge-config.json')
      const example = join(root, 'examples', recipe.example)
      cpSync(example, app, { recursive: true, filter: (source) => !SKIP.test(source) })
      // Packages the example installs for itself (a version the root does not have).
      if (existsSync(join(example, 'node_modules'))) {
        symlinkSync(join(example, 'node_modules'), join(app, 'node_modules'), 'dir')
      }
      for (const [from, to] of recipe.files) {
        mkdirSync(dirname(join(app, to)), { recursive: true })
        cpSync(join(apps, from), join(app, to))
      }
      const swapped = recipe.files[0]?.[1]
      if (swapped) cpSync(bridgeOptions, join(app, dirname(swapped), 'bridge-options.mjs'))
      const started = performance.now()
      await run(recipe.build, app)
      return (performance.now() - started) / 1000
    },
    adapter: (name) => ({
      name,
      ...(recipe.refusesPostWithoutContentType === undefined
        ? {}
        : { refusesPostWithoutContentType: recipe.refusesPostWithoutContentType }),
      ...(recipe.resetsWithoutAnswer === true ? { resetsWithoutAnswer: true } : {}),
      start: async (options): Promise<Running> => {
        const bridge = await startBridge(options, 'web')
        // A nonce, so two cases never share a receiver even if a bridge port comes back.
        writeFileSync(configFile, JSON.stringify({ ...bridge.config, case: randomUUID() }))
        try {
          server ??= serve({ BRIDGE_CONFIG_FILE: configFile })
          const { base } = await server
          return { url: `${base}${recipe.path}`, close: bridge.close }
        } catch (error) {
          await bridge.close()
          throw error
        }
      },
    }),
    remove: async () => {
      await (await server?.catch(() => undefined))?.close()
      if (app) rmSync(app, { recursive: true, force: true })
    },
  }
}

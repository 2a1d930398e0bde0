/**
 * One framework's example, copied out of the repository as a user copies it and
 * served by the framework's own server, as a conformance `Adapter`: the example is
 * copied to a temporary folder outside the workspace, its webhook module swapped for
 * one that takes each case's options from a file (test/stacks/apps/), its
 * `@affiliate-webhooks/*` dependencies pointed at the packed tarballs, then
 * `npm install`, `npm run build` (offline where the sandbox allows it) and
 * `npm start` on a free port, as its README says. Each case writes its options to
 * that file (a fresh receiver and memory store) and gets its handler calls and log
 * lines over the loopback bridge of test/runtimes/runtime-bridge.ts, as Bun and Deno
 * do. A previous major is the same copy installed once more with that major's
 * versions (and, where its code must differ, the files of test/stacks/apps/previous/).
 */
import { type ChildProcess, spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { once } from 'node:events'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startBridge } from '../runtimes/runtime-bridge.js'
import type { Adapter, Running } from '../support/conformance-adapters.js'
import {
  installedVersions,
  lockedVersion,
  npmInstall,
  pointAtRegistry,
  root,
  run,
  startDetached,
  stopGroup,
  writeInto,
} from './copied-example.js'
import { recordVersions, type StackRecord } from './tested-versions.js'

export { root }

const apps = fileURLToPath(new URL('./apps/', import.meta.url))
const previousFiles = fileURLToPath(new URL('./apps/previous/', import.meta.url))
const bridgeOptions = fileURLToPath(new URL('../support/bridge-options.mjs', import.meta.url))

/** Build outputs and installs never copied from the example into the test's copy. */
const SKIP = /[\\/](node_modules|dist|build|\.output|\.astro|\.nuxt|\.svelte-kit|\.react-router)$/

export interface StackRecipe {
  /** The example under examples/. */
  example: string
  /** The stack's name in docs/stacks.md's tested-versions table. */
  stack: string
  /** [file under test/stacks/apps, where it goes in the copy]: the swapped webhook module first. */
  files: [string, string][]
  /** The packages whose installed versions the table names, the framework first. */
  versions: string[]
  /** The route the example serves the webhook on. */
  path: string
  /** Folders prepended to PATH for the copy's npm scripts (Bun for Elysia). */
  binPath?: string[]
  /** The runtime `npm start` serves it on, as the table names it: Node unless said. */
  runtime?: { name: string; command: string }
  /** See `Adapter.refusesPostWithoutContentType`. */
  refusesPostWithoutContentType?: number
  /** See `Adapter.resetsWithoutAnswer`. */
  resetsWithoutAnswer?: boolean
  /** See `Adapter.buffersWholeBody`. */
  buffersWholeBody?: boolean
}

/** A previous major of the stack: the copy installed once more at these versions. */
export interface PreviousMajor {
  /** Exact versions of the packages that differ from the current major's. */
  versions: Record<string, string>
  /** [file under test/stacks/apps/previous/, where it goes in the copy]: only where code differs. */
  files?: [string, string][]
  /** Files of the current major's example the previous major does not read. */
  remove?: string[]
}

/** Where the sandbox allows it, builds run in a network namespace with no network at all. */
export const offline = spawnSync('unshare', ['-n', 'true']).status === 0

function baseEnv(recipe: StackRecipe, extra: Record<string, string>): NodeJS.ProcessEnv {
  const { AFFILIATE_WEBHOOK_SECRET: _unused, ...rest } = process.env
  return {
    ...rest,
    PATH: [...(recipe.binPath ?? []), rest.PATH ?? ''].join(':'),
    NODE_ENV: 'production',
    ASTRO_TELEMETRY_DISABLED: '1',
    NUXT_TELEMETRY_DISABLED: '1',
    NEXT_TELEMETRY_DISABLED: '1',
    DO_NOT_TRACK: '1',
    ...extra,
  }
}

/** `Node 24.21.0`: the runtime the copy's npm scripts find first on their PATH. */
function runtimeOf(recipe: StackRecipe, app: string, env: NodeJS.ProcessEnv): string {
  const { name, command } = recipe.runtime ?? { name: 'Node', command: 'node' }
  const ran = spawnSync(command, ['--version'], { cwd: app, env, encoding: 'utf8' })
  if (ran.status !== 0) throw new Error(`${command} --version failed: ${ran.stderr}`)
  return `${name} ${ran.stdout.trim().replace(/^v/, '')}`
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

/** What one install and build took, for the test's log line. */
export interface Built {
  install: number
  build: number
  record: StackRecord
}

export interface BuiltStack {
  /** Copies the example out, installs, builds; resolves with the seconds each took. */
  build(): Promise<Built>
  /** Installs the copy once more at `previous`'s versions and builds it again. */
  rebuildAs(previous: PreviousMajor): Promise<Built>
  /**
   * The conformance adapter: the built server, started on the first case, with the
   * case's options; `differs` for what a previous major does otherwise.
   */
  adapter(name: string, differs?: Pick<StackRecipe, 'refusesPostWithoutContentType'>): Adapter
  /** Stops the server and removes the copy. */
  remove(): Promise<void>
}

/** The example of `recipe`, copied out, installed and built in a folder of its own. */
export function builtStack(recipe: StackRecipe): BuiltStack {
  let work = ''
  let app = ''
  let configFile = ''
  let server: Promise<{ base: string; close(): Promise<void> }> | undefined
  const serve = async (env: Record<string, string>) => {
    const port = await freePort()
    const child = startDetached(
      app,
      baseEnv(recipe, { PORT: String(port), HOST: '127.0.0.1', ...env }),
    )
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
      await stopGroup(child)
    }
    try {
      await ready(child, base, () => log)
    } catch (error) {
      await close()
      throw error
    }
    return { base, close }
  }
  const installAndBuild = async (major: 'current' | 'previous'): Promise<Built> => {
    const env = baseEnv(recipe, {})
    // As a user installs: NODE_ENV=production would leave the devDependencies out.
    const { NODE_ENV: _production, ...installEnv } = env
    const install = await npmInstall(app, installEnv as NodeJS.ProcessEnv)
    const started = performance.now()
    await run(['npm', 'run', 'build', '--silent'], app, env, offline)
    const build = (performance.now() - started) / 1000
    const record: StackRecord = {
      stack: recipe.stack,
      major,
      packages: installedVersions(app, recipe.versions),
      runtime: runtimeOf(recipe, app, env),
    }
    recordVersions(record)
    return { install, build, record }
  }
  const stopServer = async () => {
    await (await server?.catch(() => undefined))?.close()
    server = undefined
  }
  return {
    async build() {
      work = mkdtempSync(join(tmpdir(), `aw-stack-${recipe.example}-`))
      app = join(work, recipe.example)
      configFile = join(work, 'bridge-config.json')
      cpSync(join(root, 'examples', recipe.example), app, {
        recursive: true,
        filter: (source) => !SKIP.test(source),
      })
      for (const [from, to] of recipe.files)
        writeInto(join(app, to), readFileSync(join(apps, from), 'utf8'))
      const swapped = recipe.files[0]?.[1]
      if (swapped) cpSync(bridgeOptions, join(app, dirname(swapped), 'bridge-options.mjs'))
      const pinned = Object.fromEntries(
        recipe.versions.map((name) => [name, lockedVersion(recipe.example, name)]),
      )
      await pointAtRegistry(app, pinned)
      return installAndBuild('current')
    },
    async rebuildAs(previous) {
      await stopServer()
      const file = join(app, 'package.json')
      const manifest = JSON.parse(readFileSync(file, 'utf8'))
      for (const [name, version] of Object.entries(previous.versions)) {
        const field =
          manifest.devDependencies?.[name] !== undefined ? 'devDependencies' : 'dependencies'
        manifest[field] ??= {}
        manifest[field][name] = version
      }
      writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`)
      // npm resolves a major change in place only from scratch for those packages
      // (React Router's exact peers between its packages refuse otherwise).
      rmSync(join(app, 'package-lock.json'), { force: true })
      // A scoped package goes with its whole scope (React Router's express adapter
      // peers on the exact react-router of its major).
      for (const name of Object.keys(previous.versions))
        rmSync(join(app, 'node_modules', name.split('/')[0] as string), {
          recursive: true,
          force: true,
        })
      for (const name of previous.remove ?? []) rmSync(join(app, name), { force: true })
      for (const [from, to] of previous.files ?? []) {
        writeInto(join(app, to), readFileSync(join(previousFiles, from), 'utf8'))
      }
      for (const output of [
        'dist',
        'build',
        '.output',
        '.svelte-kit',
        '.react-router',
        '.nuxt',
        '.astro',
      ])
        rmSync(join(app, output), { recursive: true, force: true })
      return installAndBuild('previous')
    },
    adapter: (name, differs) => ({
      name,
      ...((differs ?? recipe).refusesPostWithoutContentType === undefined
        ? {}
        : { refusesPostWithoutContentType: (differs ?? recipe).refusesPostWithoutContentType }),
      ...(recipe.resetsWithoutAnswer === true ? { resetsWithoutAnswer: true } : {}),
      ...(recipe.buffersWholeBody === true ? { buffersWholeBody: true } : {}),
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
      await stopServer()
      if (work) rmSync(work, { recursive: true, force: true })
    },
  }
}

/** The line a stack test prints once its copy is built: what ran, and how long each step took. */
export function builtLine(recipe: StackRecipe, built: Built): string {
  const packages = Object.entries(built.record.packages)
    .map(([name, version]) => `${name}@${version}`)
    .join(', ')
  return `${recipe.stack} (${built.record.major}: ${packages} on ${built.record.runtime}): copied out, npm install ${built.install.toFixed(1)} s, npm run build${offline ? ' (no network)' : ''} ${built.build.toFixed(1)} s`
}

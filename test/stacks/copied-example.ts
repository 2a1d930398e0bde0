/**
 * An example copied out of the repository the way a user copies it: into a
 * temporary folder outside the workspace, its `@affiliate-webhooks/*` dependencies
 * installed by name from the run's local registry (every package published to it
 * by the release path), with plain `npm install` (the run's npm cache first), then built and
 * served with the commands its README gives (`npm run build`, `npm start`).
 * Nothing may reach back into the repository: no workspace, no `extends`, no path.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { pointScopeAt, sharedRegistry } from '../support/shared-registry.js'

export const root = new URL('../..', import.meta.url).pathname

/** What npm prints for a peer or engine range the install did not meet. */
export const INSTALL_PROBLEM = /EBADENGINE|ERESOLVE|ENOTSUP|peer dep|Unsupported engine/i

/** The version the repository's lockfile installed for `name` in `example`. */
export function lockedVersion(example: string, name: string): string {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'))
  const entry =
    lock.packages[`examples/${example}/node_modules/${name}`] ??
    lock.packages[`node_modules/${name}`]
  if (!entry?.version) throw new Error(`package-lock.json has no ${name} for examples/${example}`)
  return entry.version
}

/**
 * Points the copy at the run's local registry for the `@affiliate-webhooks` scope
 * (an `.npmrc` line, as the README tells a user), keeping its dependencies by name
 * at the versions it names, and pins the `pinned` packages at exact versions.
 */
export async function pointAtRegistry(app: string, pinned: Record<string, string>): Promise<void> {
  pointScopeAt(app, await sharedRegistry())
  const file = join(app, 'package.json')
  const manifest = JSON.parse(readFileSync(file, 'utf8'))
  for (const field of ['dependencies', 'devDependencies']) {
    const deps: Record<string, string> = manifest[field] ?? {}
    for (const name of Object.keys(deps)) if (pinned[name] !== undefined) deps[name] = pinned[name]
  }
  writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`)
}

/** Runs `argv` in `cwd` to its end; rejects with its output when it fails; resolves with it. */
export async function run(
  argv: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  offline = false,
): Promise<string> {
  const [command, ...args] = offline ? ['unshare', '-n', ...argv] : argv
  const child = spawn(command as string, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (chunk) => {
    output += chunk
  })
  child.stderr.on('data', (chunk) => {
    output += chunk
  })
  const [code] = await once(child, 'exit')
  if (code !== 0) throw new Error(`${argv.join(' ')} exited ${code}:\n${output.slice(-4000)}`)
  return output
}

/** `npm install` in the copy; rejects on a failed install or a peer or engine warning. */
export async function npmInstall(app: string, env: NodeJS.ProcessEnv): Promise<number> {
  const started = performance.now()
  const output = await run(
    ['npm', 'install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel', 'warn'],
    app,
    env,
  )
  const problems = output.split('\n').filter((line) => INSTALL_PROBLEM.test(line))
  if (problems.length > 0) throw new Error(`npm install warned:\n${problems.join('\n')}`)
  return (performance.now() - started) / 1000
}

/** `name@version` of each package as the copy installed it. */
export function installedVersions(app: string, names: string[]): Record<string, string> {
  const versions: Record<string, string> = {}
  for (const name of names) {
    const file = join(app, 'node_modules', name, 'package.json')
    if (!existsSync(file)) throw new Error(`${name} is not installed in the copy`)
    versions[name] = JSON.parse(readFileSync(file, 'utf8')).version
  }
  return versions
}

/** Starts `npm start` (or `npm run <script>`) in its own process group, so closing it ends the server under npm too. */
export function startDetached(app: string, env: NodeJS.ProcessEnv, script = 'start'): ChildProcess {
  return spawn('npm', ['run', script, '--silent'], {
    cwd: app,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
}

/** Ends a process group started by {@link startDetached}. */
export async function stopGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, 'exit')
  try {
    process.kill(-(child.pid as number), 'SIGKILL')
  } catch {
    child.kill('SIGKILL')
  }
  await exited
}

/** Writes `text` to `file`, creating its folder. */
export function writeInto(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, text)
}

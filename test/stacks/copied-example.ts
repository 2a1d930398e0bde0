/**
 * An example copied out of the repository the way a user copies it: into a
 * temporary folder outside the workspace, its `@affiliate-webhooks/*` dependencies
 * pointed at `npm run pack`'s tarballs (the packages as they will be published),
 * installed with plain `npm install` (the run's npm cache first), then built and
 * served with the commands its README gives (`npm run build`, `npm start`).
 * Nothing may reach back into the repository: no workspace, no `extends`, no path.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'

const exec = promisify(execFile)

export const root = new URL('../..', import.meta.url).pathname

/** What npm prints for a peer or engine range the install did not meet. */
export const INSTALL_PROBLEM = /EBADENGINE|ERESOLVE|ENOTSUP|peer dep|Unsupported engine/i

/** The repo's publishable packages: name to folder and the repo packages it depends on. */
function repoPackages(): Map<string, { dir: string; dependencies: string[] }> {
  const packages = new Map<string, { dir: string; dependencies: string[] }>()
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  for (const dir of manifest.workspaces as string[]) {
    if (!dir.startsWith('packages/')) continue
    const pkg = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8'))
    if (pkg.private) continue
    packages.set(pkg.name, {
      dir,
      dependencies: Object.keys(pkg.dependencies ?? {}).filter((name) =>
        name.startsWith('@affiliate-webhooks/'),
      ),
    })
  }
  return packages
}

/** `names` and every repo package they need at run time. */
export function closure(names: string[]): string[] {
  const packages = repoPackages()
  const wanted = new Set<string>()
  const add = (name: string) => {
    const pkg = packages.get(name)
    if (!pkg) throw new Error(`${name} is not a package of this repository`)
    if (wanted.has(name)) return
    wanted.add(name)
    for (const dep of pkg.dependencies) add(dep)
  }
  for (const name of names) add(name)
  return [...wanted]
}

/**
 * The tarballs of `names` and the repo packages they need, packed into `out` the
 * way `npm run pack` packs them (`npm pack` of each package folder, from its
 * build): name to tarball.
 */
export async function packTarballs(out: string, names: string[]): Promise<Map<string, string>> {
  const packages = repoPackages()
  const wanted = closure(names)
  mkdirSync(out, { recursive: true })
  const { stdout } = await exec(
    'npm',
    [
      'pack',
      '--json',
      '--pack-destination',
      out,
      ...wanted.map((name) => `./${packages.get(name)?.dir}`),
    ],
    { cwd: root, maxBuffer: 16 * 1024 * 1024 },
  )
  const packed = JSON.parse(stdout) as { name: string; filename: string }[]
  return new Map(packed.map((entry) => [entry.name, join(out, entry.filename)]))
}

/** The example's `@affiliate-webhooks/*` dependencies. */
export function repoDependencies(app: string): string[] {
  const manifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8'))
  return Object.keys({ ...manifest.dependencies, ...manifest.devDependencies }).filter((name) =>
    name.startsWith('@affiliate-webhooks/'),
  )
}

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
 * Rewrites the copy's package.json: each `@affiliate-webhooks/*` dependency, and the
 * repo packages those need, as its tarball; the `pinned` packages at exact versions.
 */
export function pointAtTarballs(
  app: string,
  tarballs: Map<string, string>,
  pinned: Record<string, string>,
): void {
  const file = join(app, 'package.json')
  const manifest = JSON.parse(readFileSync(file, 'utf8'))
  for (const field of ['dependencies', 'devDependencies']) {
    const deps: Record<string, string> = manifest[field] ?? {}
    for (const name of Object.keys(deps)) {
      if (name.startsWith('@affiliate-webhooks/')) delete deps[name]
      else if (pinned[name] !== undefined) deps[name] = pinned[name]
    }
  }
  manifest.dependencies ??= {}
  for (const [name, tarball] of tarballs) manifest.dependencies[name] = `file:${tarball}`
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

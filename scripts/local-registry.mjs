// A private npm registry on loopback: Verdaccio (the pinned devDependency), its
// storage and configuration in a temporary folder, no uplinks (it serves only what
// is published to it; an app points only the @affiliate-webhooks scope at it), and
// a user whose token sits in a temporary npm userconfig (mode 0600) that
// publishing uses. `npm run registry` and the tests start it from here.
import { execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const SCOPE = '@affiliate-webhooks'
export const DEFAULT_PORT = 4873

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const verdaccioBin = join(root, 'node_modules', 'verdaccio', 'bin', 'verdaccio')

/** Whether 127.0.0.1:`port` can be listened on now. */
export function portFree(port) {
  return new Promise((done) => {
    const server = createServer()
    server.once('error', () => done(false))
    server.listen(port, '127.0.0.1', () => server.close(() => done(true)))
  })
}

/** A port free on 127.0.0.1 now (the system picks it). */
export function freePort() {
  return new Promise((done, failed) => {
    const server = createServer()
    server.once('error', failed)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => done(port))
    })
  })
}

/** Package rules that take no publish (`closed`: names, for tests of a failed release). */
const closedRules = (closed) =>
  closed
    .map((name) => `  '${name}':\n    access: $all\n    publish: no-one-publishes-here\n`)
    .join('')

const config = (dir, closed) => `# written by scripts/local-registry.mjs
storage: ${join(dir, 'storage')}
auth:
  htpasswd:
    file: ${join(dir, 'htpasswd')}
    max_users: 10
uplinks: {}
packages:
${closedRules(closed)}  '${SCOPE}/*':
    access: $all
    publish: $authenticated
    unpublish: $authenticated
  '**':
    access: $all
    publish: $authenticated
web:
  enable: false
log: { type: stdout, format: pretty, level: warn }
`

/** Asks `url` until Verdaccio answers its ping, the child exits, or `ms` pass. */
async function waitReady(url, child, ms) {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (child.exitCode !== null) return false
    try {
      const response = await fetch(new URL('-/ping', url))
      if (response.ok) return true
    } catch {
      // not listening yet
    }
    await new Promise((done) => setTimeout(done, 100))
  }
  return false
}

/** Adds a user and returns its token (Verdaccio's htpasswd answers the npm adduser call). */
async function addUser(url) {
  const name = 'release'
  const password = `pw-${process.pid}-${Date.now()}`
  const response = await fetch(new URL(`-/user/org.couchdb.user:${name}`, url), {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, password, type: 'user', roles: [] }),
  })
  const body = await response.json()
  if (!response.ok || !body.token)
    throw new Error(`the registry refused a new user (${response.status})`)
  return body.token
}

/** The user's own npm userconfig text, so a temporary one keeps their settings. */
function ownUserconfig() {
  try {
    const file = execFileSync('npm', ['config', 'get', 'userconfig'], { encoding: 'utf8' }).trim()
    return existsSync(file) ? `${readFileSync(file, 'utf8').trimEnd()}\n` : ''
  } catch {
    return ''
  }
}

/**
 * Starts Verdaccio on 127.0.0.1:`port` (a free one when 0); the `closed` packages
 * refuse every publish (tests of a release that fails part way). Resolves with its URL,
 * `userconfig` (an npm config file that can publish to it), the `.npmrc` scope
 * line, the process and `stop()`; rejects with one line when it cannot start.
 */
export async function startRegistry({
  port = DEFAULT_PORT,
  readyWithinMs = 30_000,
  closed = [],
} = {}) {
  const chosen = port === 0 ? await freePort() : port
  if (!(await portFree(chosen))) {
    throw new Error(`port ${chosen} is in use (another registry running?): pass --port N`)
  }
  const dir = mkdtempSync(join(tmpdir(), 'aw-registry-'))
  writeFileSync(join(dir, 'config.yaml'), config(dir, closed))
  const url = `http://127.0.0.1:${chosen}/`
  const child = spawn(
    process.execPath,
    [verdaccioBin, '--config', join(dir, 'config.yaml'), '--listen', `127.0.0.1:${chosen}`],
    { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  )
  let log = ''
  const keep = (chunk) => {
    log = `${log}${chunk}`.slice(-8000)
  }
  child.stdout.on('data', keep)
  child.stderr.on('data', keep)
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit')
      try {
        process.kill(-child.pid, 'SIGTERM')
      } catch {
        child.kill('SIGTERM')
      }
      await exited
    }
    rmSync(dir, { recursive: true, force: true })
  }
  if (!(await waitReady(url, child, readyWithinMs))) {
    await stop()
    throw new Error(
      `Verdaccio did not answer on ${url}: ${log.trim().split('\n').slice(-3).join(' | ')}`,
    )
  }
  try {
    const token = await addUser(url)
    const userconfig = join(dir, 'npmrc')
    const authKey = `//127.0.0.1:${chosen}/:_authToken`
    writeFileSync(userconfig, `${ownUserconfig()}${authKey}=${token}\n`, { mode: 0o600 })
    return { url, userconfig, scopeLine: `${SCOPE}:registry=${url}`, child, stop, log: () => log }
  } catch (error) {
    await stop()
    throw error
  }
}

/**
 * Publishes the checkout at `cwd` to `registry.url` through `npm run release`'s
 * script, with `args` added; resolves with its output, rejects with it.
 * `onOutput` is given each chunk of that output as it comes (its steps, the build's lines).
 */
export async function releaseTo(
  registry,
  args = [],
  { cwd = root, env = process.env, onOutput = () => {} } = {},
) {
  const child = spawn(
    process.execPath,
    [join(cwd, 'scripts', 'release.mjs'), '--registry', registry.url, ...args],
    {
      cwd,
      env: { ...env, npm_config_userconfig: registry.userconfig },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  let output = ''
  child.stdout.on('data', (chunk) => {
    output += chunk
    onOutput(String(chunk))
  })
  child.stderr.on('data', (chunk) => {
    output += chunk
    onOutput(String(chunk))
  })
  const [code] = await once(child, 'exit')
  if (code !== 0) {
    const error = new Error(`release exited ${code}:\n${output}`)
    error.output = output
    error.code = code
    throw error
  }
  return output
}

/**
 * The run's one local registry: `npm run registry`'s script on a free loopback
 * port, every package of the checkout published to it through the release path.
 * The first test file that asks starts it; the others wait for its `registry
 * ready:` line. registry-setup.ts (vitest's globalSetup) stops it after the run.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { inject } from 'vitest'
import { freePort } from '../../scripts/local-registry.mjs'

const root = new URL('../..', import.meta.url).pathname
const READY = /^registry ready: (\S+)/m

/** The URL of the run's local registry, started on the first call of the run. */
export async function sharedRegistry(timeoutMs = 120_000): Promise<string> {
  const dir = inject('awRegistryDir')
  if (!dir) throw new Error('no awRegistryDir: run this test through vitest.config.ts')
  const log = join(dir, 'log')
  let starter = false
  try {
    mkdirSync(join(dir, 'lock'))
    starter = true
  } catch {
    // another test file started it
  }
  if (starter) {
    const port = await freePort()
    const out = openSync(log, 'a')
    const child = spawn(process.execPath, ['scripts/registry.mjs', '--port', String(port)], {
      cwd: root,
      stdio: ['ignore', out, out],
      detached: true,
    })
    child.unref()
    writeFileSync(join(dir, 'pid'), String(child.pid))
  }
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const text = existsSync(log) ? readFileSync(log, 'utf8') : ''
    const ready = READY.exec(text)
    if (ready?.[1]) return ready[1]
    if (/^registry: /m.test(text)) throw new Error(`the local registry did not start:\n${text}`)
    await new Promise((done) => setTimeout(done, 200))
  }
  throw new Error(
    `the local registry was not ready within ${timeoutMs} ms:\n${readFileSync(log, 'utf8')}`,
  )
}

/**
 * An app folder's `.npmrc` line pointing the @affiliate-webhooks scope at `url`;
 * with `keep`, added after the lines a starter's own `.npmrc` has (sv's `engine-strict`).
 */
export function pointScopeAt(app: string, url: string, keep = false): void {
  const file = join(app, '.npmrc')
  const kept = keep && existsSync(file) ? readFileSync(file, 'utf8').replace(/\n?$/, '\n') : ''
  writeFileSync(file, `${kept}@affiliate-webhooks:registry=${url}\n`)
}

/**
 * The CLI piped into a reader that stops early (`affiliate-webhooks init --dry-run | head -3`):
 * it ends quietly with 0, without an unhandled EPIPE on stderr.
 */
import { spawn } from 'node:child_process'
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { root } from '../stacks/copied-example.js'
import { CLI } from '../support/cli-live.js'

const work = mkdtempSync(join(tmpdir(), 'aw-epipe-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

it('init --dry-run into a reader that has gone exits 0 with nothing on stderr', async () => {
  const app = join(work, 'shop')
  cpSync(join(root, 'test/cli/init-apps/express-json'), app, { recursive: true })
  const child = spawn(process.execPath, [CLI, 'init', '--dry-run'], {
    cwd: app,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (chunk) => {
    stderr += chunk
  })
  // Like `head` that has read its lines: the read end of the pipe is closed
  // before the CLI writes its plan, so its writes meet EPIPE.
  child.stdout.destroy()
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  expect(stderr).not.toMatch(/EPIPE|Unhandled/)
  expect(code).toBe(0)
})

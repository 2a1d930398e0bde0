/**
 * Every package as npm would publish it passes publint --strict and
 * arethetypeswrong for node10, node16 (CJS and ESM) and bundler resolution, and
 * every export carries TSDoc with an up-to-date API section in its README.
 */
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const run = promisify(execFile)
const root = new URL('../..', import.meta.url).pathname

describe('published packages', () => {
  it('pass publint --strict and arethetypeswrong (npm run check:packages)', async () => {
    const { stdout } = await run('node', ['scripts/check-packages.mjs'], { cwd: root }).catch(
      (error: { stdout: string; stderr: string }) => {
        throw new Error(`check:packages failed\n${error.stdout}\n${error.stderr}`)
      },
    )
    expect(stdout).toMatch(/@affiliate-webhooks\/core .*all good .*no problems/)
  }, 300_000)

  it('document every export in TSDoc, with README API sections up to date (npm run docs)', async () => {
    await run('node', ['scripts/api-docs.mjs', '--check'], { cwd: root }).catch(
      (error: { stderr: string }) => {
        throw new Error(`docs check failed:\n${error.stderr}`)
      },
    )
  }, 120_000)
})

/**
 * Every package as npm would publish it passes publint --strict and
 * arethetypeswrong for node10, node16 (CJS and ESM) and bundler resolution.
 * (Every export's TSDoc and docs/api are checked by `npm run docs:check`.)
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
    // Not a claim about speed: about 70 s on an idle 2-core machine, over 300 s with two
    // builds beside it (npm pack and attw for each of 19 packages).
  }, 900_000)
})

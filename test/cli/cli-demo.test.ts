/**
 * `npm start` runs the demo, which drives the CLI's delivery simulator: it must
 * end with every delivery succeeded and every answer as expected (exit 0).
 */
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { expect, it } from 'vitest'

const run = promisify(execFile)
const root = new URL('../..', import.meta.url).pathname

it('the npm start demo simulates, checks the conversions table and the refusals, and exits 0', async () => {
  const { stdout } = await run(
    process.execPath,
    [join(root, 'node_modules/tsx/dist/cli.mjs'), 'examples/demo/src/demo.ts'],
    { cwd: root },
  )
  expect(stdout).toMatch(
    /^Simulated 25 conversion lifecycles -> http:\/\/127\.0\.0\.1:\d+\/hooks$/m,
  )
  expect(stdout).toMatch(/^Every delivery succeeded\.$/m)
  expect(stdout).toMatch(/verify: body_reserialized: /)
  expect(stdout).toMatch(/verify: timestamp_outside_tolerance: /)
  expect(stdout).toMatch(/\nAll as expected\.\n$/)
})

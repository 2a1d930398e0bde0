// npm runs `prepare` of a workspace on `npm ci` / `npm install`, before it links
// the workspace's bins, and it skips a bin whose file does not exist. So on a
// fresh clone the CLI is built here, and `npx affiliate-webhooks` works right
// after `npm ci`. Its type bundle reads the core's and the emulator's built types,
// so they are built first if they have not been. When dist exists this does nothing: `npm pack`
// (run by tests while other tests use the binary) must not rebuild it under them;
// `npm run build` is what refreshes it.
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const dir = (path) => fileURLToPath(new URL(path, import.meta.url))
const build = (cwd) => execFileSync('npm', ['run', 'build', '--silent'], { cwd, stdio: 'inherit' })

if (!existsSync(dir('../dist/cli.js'))) {
  if (!existsSync(dir('../../core/dist/node/index.d.ts'))) build(dir('../../core'))
  if (!existsSync(dir('../../emulator/dist/index.d.ts'))) build(dir('../../emulator'))
  build(dir('..'))
}

// Runs a command on another Node, fetched from the npm registry (the `node` package
// brings the binary for this platform), so proving a Node needs nothing installed by
// hand. The binary is kept in node_modules/.cache/node/<version>.
//
//   node scripts/on-node.mjs <which> -- <command> [args...]
//
// <which> is `floor` (the lowest Node the published packages' `engines` name) or a
// version range for the registry (`22` is the newest 22). In the command, `node` is
// that Node, and so is every `node` its children start (PATH leads with it).
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

const [which, separator, command, ...args] = process.argv.slice(2)
if (!which || separator !== '--' || !command) {
  console.error('usage: node scripts/on-node.mjs <floor|range> -- <command> [args...]')
  process.exit(2)
}

/** The lowest version every published package's `engines.node` (`>=x.y[.z]`) allows. */
function engineFloor() {
  const floors = new Set()
  for (const dir of readdirSync('packages')) {
    const manifest = JSON.parse(readFileSync(join('packages', dir, 'package.json'), 'utf8'))
    if (manifest.private) continue
    const match = /^>=\s*(\d+)\.(\d+)(?:\.(\d+))?$/.exec(manifest.engines?.node ?? '')
    if (!match)
      throw new Error(
        `${manifest.name}: engines.node must read ">=x.y", found "${manifest.engines?.node}"`,
      )
    floors.add(`${match[1]}.${match[2]}.${match[3] ?? 0}`)
  }
  if (floors.size !== 1)
    throw new Error(`the packages name different Node floors: ${[...floors].join(', ')}`)
  return [...floors][0]
}

const spec = which === 'floor' ? engineFloor() : which
const dir = resolve('node_modules/.cache/node', spec)
const bin = join(dir, 'node_modules', '.bin')
const nodeBin = join(bin, process.platform === 'win32' ? 'node.cmd' : 'node')
if (!existsSync(nodeBin)) {
  mkdirSync(dir, { recursive: true })
  console.log(`on-node: fetching node@${spec} from the registry`)
  const install = spawnSync(
    'npm',
    [
      'install',
      '--prefix',
      dir,
      '--no-save',
      '--no-package-lock',
      '--no-audit',
      '--no-fund',
      `node@${spec}`,
    ],
    { stdio: 'inherit', shell: process.platform === 'win32' },
  )
  if (install.status !== 0 || !existsSync(nodeBin)) {
    console.error(`on-node: could not install node@${spec} (npm exited ${install.status})`)
    process.exit(1)
  }
}
const version = spawnSync(nodeBin, ['--version'], { encoding: 'utf8' }).stdout.trim()
console.log(`on-node: ${[command, ...args].join(' ')} on Node ${version}`)
const env = {
  ...process.env,
  PATH: `${bin}${process.platform === 'win32' ? ';' : ':'}${process.env.PATH}`,
}
const run = spawnSync(command === 'node' ? nodeBin : command, args, { stdio: 'inherit', env })
process.exit(run.status ?? 1)

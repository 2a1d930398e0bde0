import { cpSync } from 'node:fs'
import { join } from 'node:path'
import { lockedVersion, npmInstall, packTarballs, pointAtTarballs, repoDependencies, root, installedVersions } from './copied-example.js'
const ex = process.argv[2] as string
const pins = process.argv.slice(3)
const app = `/tmp/aw-try/${ex}`
cpSync(join(root, 'examples', ex), app, { recursive: true, filter: (s) => !/node_modules/.test(s) })
let t = performance.now()
const tb = await packTarballs('/tmp/aw-try/packed-' + ex, repoDependencies(app))
console.log('pack', ((performance.now() - t) / 1000).toFixed(1))
pointAtTarballs(app, tb, Object.fromEntries(pins.map((n) => [n, lockedVersion(ex, n)])))
console.log('install', await npmInstall(app, process.env))
console.log(installedVersions(app, pins))

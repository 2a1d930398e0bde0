// Builds every workspace package that has a build script, dependencies first,
// so a package's type bundle always finds the types of the packages it imports.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

const root = JSON.parse(readFileSync('package.json', 'utf8'))
const packages = new Map()
for (const dir of root.workspaces.filter((w) => w.startsWith('packages/'))) {
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  if (manifest.scripts?.build) packages.set(manifest.name, { dir, manifest })
}

const order = []
const visit = (name, trail = []) => {
  if (order.includes(name)) return
  if (trail.includes(name)) throw new Error(`dependency cycle: ${[...trail, name].join(' -> ')}`)
  const { manifest } = packages.get(name)
  const deps = {
    ...manifest.dependencies,
    ...manifest.peerDependencies,
    ...manifest.devDependencies,
  }
  for (const dep of Object.keys(deps)) if (packages.has(dep)) visit(dep, [...trail, name])
  order.push(name)
}
for (const name of packages.keys()) visit(name)

for (const name of order) {
  process.stdout.write(`build ${name}\n`)
  execFileSync('npm', ['run', 'build', '--silent', '-w', name], {
    stdio: ['ignore', 'ignore', 'inherit'],
  })
}

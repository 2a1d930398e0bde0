// Records in package-lock.json the other platforms' optional binaries (esbuild,
// rollup, biome, next's swc...) that npm left out because the registry mirror
// this project installs from does not carry their pinned versions. Without them
// `npm ci` refuses the lockfile as "not in sync". Each entry carries its os/cpu/
// libc, so npm skips it on a platform it does not fit, without fetching it.
//   node scripts/complete-lockfile.mjs   (after every npm install that changes the lockfile)
import { readFileSync, writeFileSync } from 'node:fs'

const path = 'package-lock.json'
const lock = JSON.parse(readFileSync(path, 'utf8'))
const { packages } = lock

/** The lockfile location npm would resolve `name` to from `from`, if any. */
function resolved(from, name) {
  // npm looks for a dependency in the dependent's own node_modules, then upward.
  let base = from
  for (;;) {
    const location = `${base ? `${base}/` : ''}node_modules/${name}`
    if (packages[location]) return location
    if (!base) return undefined
    const cut = base.lastIndexOf('/node_modules/')
    base = cut === -1 ? '' : base.slice(0, cut)
  }
}

// These packages are named after the platform they are built for
// (@biomejs/cli-darwin-arm64, @rollup/rollup-linux-arm-musleabihf,
// @next/swc-win32-x64-msvc...), which is also what their own os/cpu/libc say.
const OS = [
  'aix',
  'android',
  'darwin',
  'freebsd',
  'linux',
  'netbsd',
  'openbsd',
  'openharmony',
  'sunos',
  'win32',
]
const CPU = ['arm64', 'arm', 'ia32', 'loong64', 'mips64el', 'ppc64', 'riscv64', 's390x', 'x64']
function platformOf(name) {
  const parts = name.split('/').pop().split('-')
  const os = parts.find((part) => OS.includes(part))
  const cpu = parts.find((part) => CPU.includes(part))
  if (!os || !cpu)
    throw new Error(`complete-lockfile: cannot tell the platform of ${name}; add it by hand`)
  const libc = parts.some((part) => part.startsWith('musl'))
    ? 'musl'
    : os === 'linux' && parts.some((part) => part.startsWith('gnu'))
      ? 'glibc'
      : undefined
  return { os, cpu, libc }
}

let added = 0
for (const [location, entry] of Object.entries(packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const found = resolved(location, name)
    // Platform binaries are pinned to one exact version; another version found
    // upward (hoisted for a sibling) does not satisfy this dependent.
    const exact = /^\d+\.\d+\.\d+(-[\w.]+)?$/.test(version)
    if (found && (!exact || packages[found].version === version)) continue
    const { os, cpu, libc } = platformOf(name)
    const record = { version }
    if (cpu) record.cpu = Array.isArray(cpu) ? cpu : [cpu]
    if (entry.dev) record.dev = true
    if (libc) record.libc = Array.isArray(libc) ? libc : [libc]
    record.optional = true
    if (os) record.os = Array.isArray(os) ? os : [os]
    // Hoisted when the place is free, else beside the dependent, as npm would.
    const place = found ? `${location}/node_modules/${name}` : `node_modules/${name}`
    packages[place] = record
    added++
  }
}

// npm writes entries sorted by location; keep that so diffs stay small.
lock.packages = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
)
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`)
console.log(`complete-lockfile: added ${added} optional platform entries`)

/**
 * The release path against a real registry: Verdaccio on a free loopback port, a
 * copy of the checkout (sources, manifests and pending changesets), and
 * `scripts/release.mjs` run there as `npm run release` runs it: the version step
 * consumes the pending changesets, the build, one `npm pack` per package, the
 * tarballs published in dependency order. Then, in clean folders outside the
 * repository, on Node 24 and on the lowest Node `engines` names, every package
 * installs by name with plain `npm install` and its entry points load; the CLI
 * runs through npx; publishing a published version again is refused in one line;
 * and a second release (a changeset, the version step, the release) installs too.
 */
import { execFile, execFileSync } from 'node:child_process'
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type LocalRegistry, releaseTo, startRegistry } from '../../scripts/local-registry.mjs'
import { type ReleasePackage, readPackages } from '../../scripts/release-plan.mjs'
import { INSTALL_PROBLEM } from '../stacks/copied-example.js'

const exec = promisify(execFile)
const root = new URL('../..', import.meta.url).pathname

let work: string
let registry: LocalRegistry
let copy: string
let packages: ReleasePackage[]
let firstRelease: string
const nodes: { name: string; bin: string }[] = []

/** The checkout as a release sees it: sources, manifests, changesets, no build output. */
function copyCheckout(to: string): void {
  const skip = /[\\/](node_modules|dist|\.git|\.tmp|coverage)$/
  for (const entry of readdirSync(root)) {
    if (
      ['packages', 'examples', 'scripts', '.changeset'].includes(entry) ||
      /^(tsconfig.*\.json|tsup\.package\.ts|package\.json|LICENSE)$/.test(entry)
    ) {
      cpSync(join(root, entry), join(to, entry), {
        recursive: true,
        filter: (source) => !skip.test(source),
      })
    }
  }
  // The tools the release runs (changesets, tsup, publint); the copy's own packages are its own.
  symlinkSync(join(root, 'node_modules'), join(to, 'node_modules'))
}

/** The copy's manifests now. */
const manifests = () => readPackages(copy)

/** A clean folder outside the repository whose @affiliate-webhooks scope reads the registry. */
function cleanApp(name: string): string {
  const app = join(work, 'apps', name)
  mkdirSync(app, { recursive: true })
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true }))
  writeFileSync(join(app, '.npmrc'), `${registry.scopeLine}\n`)
  return app
}

/** Runs `command` with `node` (and npm's own node) being `nodeBin`. */
function onNode(nodeBin: string, command: string, args: string[], cwd: string) {
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${dirname(nodeBin)}:${process.env.PATH}` }
  for (const name of Object.keys(env))
    if (name.startsWith('npm_') && name !== 'npm_config_cache') delete env[name]
  return exec(command, args, { cwd, env, maxBuffer: 32 * 1024 * 1024 })
}

/** `npm install` by name in a clean folder; rejects on a failure or any peer or engine warning. */
async function installByName(nodeBin: string, app: string, names: string[]): Promise<string> {
  const { stdout, stderr } = await onNode(
    nodeBin,
    'npm',
    ['install', '--no-audit', '--no-fund', ...names],
    app,
  )
  const problems = `${stdout}\n${stderr}`.split('\n').filter((line) => INSTALL_PROBLEM.test(line))
  if (problems.length > 0)
    throw new Error(`npm install ${names.join(' ')} warned:\n${problems.join('\n')}`)
  return stdout
}

/** The size of the folder's node_modules and the number of packages in it, itself included. */
async function installedFootprint(app: string): Promise<{ kilobytes: number; count: number }> {
  const { stdout } = await exec('du', ['-sk', 'node_modules'], { cwd: app })
  const lock = JSON.parse(readFileSync(join(app, 'package-lock.json'), 'utf8'))
  const count = Object.keys(lock.packages as object).filter(Boolean).length
  return { kilobytes: Number(stdout.split('\t')[0]), count }
}

/** The export paths of `manifest` with the conditions they ship: import, require or both. */
function entryPoints(
  manifest: Record<string, unknown>,
): { path: string; esm: boolean; cjs: boolean }[] {
  const exports = manifest.exports as Record<string, unknown>
  return Object.entries(exports)
    .filter(([path]) => path !== './package.json')
    .map(([path, target]) => {
      const conditions = typeof target === 'object' && target ? Object.keys(target) : []
      return { path, esm: conditions.includes('import'), cjs: conditions.includes('require') }
    })
}

/** Runs `task` over `items`, `limit` at a time. */
async function limited<T>(items: T[], limit: number, task: (item: T) => Promise<void>) {
  let next = 0
  const worker = async () => {
    while (next < items.length) await task(items[next++] as T)
  }
  await Promise.all(Array.from({ length: limit }, worker))
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'aw-registry-test-'))
  copy = join(work, 'checkout')
  copyCheckout(copy)
  const floor = execFileSync(
    process.execPath,
    [join(root, 'scripts/on-node.mjs'), 'floor', '--', 'node', '-p', 'process.execPath'],
    { cwd: root, encoding: 'utf8' },
  )
  nodes.push({ name: `Node ${process.versions.node}`, bin: process.execPath })
  const floorBin = floor.trim().split('\n').at(-1) as string
  nodes.push({
    name: `the floor, Node ${execFileSync(floorBin, ['--version'], { encoding: 'utf8' }).trim()}`,
    bin: floorBin,
  })
  registry = await startRegistry({ port: 0 })
  // The release path as `npm run release` runs it; the package checks run in CI's own step.
  firstRelease = await releaseTo(registry, ['--no-checks'], {
    cwd: copy,
    env: { ...process.env, AW_BUILD_CACHE: join(work, 'build-cache') },
  })
  packages = manifests()
}, 600_000)

afterAll(async () => {
  await registry?.stop()
  if (work) rmSync(work, { recursive: true, force: true })
})

describe('npm run release, to a real registry', () => {
  it('the version step took every package from 0.1.0 to the first published version, 1.0.0', () => {
    expect(firstRelease).toMatch(/release: version step: \d+ changesets/)
    expect(new Set(packages.map((pkg) => pkg.version))).toEqual(new Set(['1.0.0']))
    expect(firstRelease).toContain(
      `release: published ${packages.length} packages at 1.0.0 to ${registry.url}`,
    )
    // The packages' ranges on each other follow the version step.
    const express = packages.find((pkg) => pkg.name === '@affiliate-webhooks/express')
    const dependencies = (express?.manifest.dependencies ?? {}) as Record<string, string>
    expect(dependencies['@affiliate-webhooks/core']).toBe('1.0.0')
  })

  it('refuses to publish a published version again, in one line naming it, and publishes nothing', async () => {
    const refused = await releaseTo(registry, ['--no-version', '--no-build', '--no-checks'], {
      cwd: copy,
    }).then(
      () => undefined,
      (error: { output: string; code: number }) => error,
    )
    expect(refused?.code).toBe(1)
    const lines = (refused?.output ?? '').trim().split('\n')
    expect(lines.at(-1)).toBe(
      `release: @affiliate-webhooks/core@1.0.0 is already in ${registry.url} (and ${packages.length - 1} more); a version is published once: add a changeset and run the version step for a new one`,
    )
    expect(refused?.output).not.toMatch(/release: published/)
  }, 120_000)
})

describe.each([0, 1])('installed by name from the registry (node %i)', (which) => {
  const footprint = new Map<string, { kilobytes: number; count: number }>()
  it('every package alone, plain npm install, no peer or engine warning; each entry loads in ESM and CommonJS where shipped', async () => {
    const node = nodes[which] as { name: string; bin: string }
    const failures: string[] = []
    await limited(packages, 4, async (pkg) => {
      const app = cleanApp(`${which}-${pkg.name.split('/')[1]}`)
      try {
        await installByName(node.bin, app, [pkg.name])
        const installed = JSON.parse(
          readFileSync(join(app, 'node_modules', pkg.name, 'package.json'), 'utf8'),
        )
        if (installed.version !== '1.0.0')
          failures.push(`${pkg.name}: installed ${installed.version}`)
        for (const entry of entryPoints(installed)) {
          const specifier = `${pkg.name}${entry.path.slice(1)}`
          if (entry.esm)
            await onNode(
              node.bin,
              'node',
              ['--input-type=module', '-e', `await import(${JSON.stringify(specifier)})`],
              app,
            )
          if (entry.cjs)
            await onNode(node.bin, 'node', ['-e', `require(${JSON.stringify(specifier)})`], app)
        }
        footprint.set(pkg.name, await installedFootprint(app))
      } catch (error) {
        failures.push(`${pkg.name} on ${node.name}: ${(error as Error).message.slice(0, 2000)}`)
      }
    })
    expect(failures).toEqual([])
    // The closing note's table: what installing each package alone brings, on this Node.
    const rows = packages.map((pkg) => {
      const { kilobytes, count } = footprint.get(pkg.name) ?? { kilobytes: 0, count: 0 }
      return `| ${pkg.name} | 1.0.0 | ${node.name} | ${(kilobytes / 1024).toFixed(1)} MB | ${count} |`
    })
    console.log(
      [
        '| package | version | Node | installed size | packages it brings |',
        '|---|---|---|---|---|',
        ...rows,
      ].join('\n'),
    )
  }, 900_000)

  it('npx @affiliate-webhooks/cli --version prints the manifest version; installed alone it brings no store driver', async () => {
    const node = nodes[which] as { name: string; bin: string }
    const app = cleanApp(`${which}-npx`)
    const { stdout } = await onNode(
      node.bin,
      'npx',
      ['--yes', '@affiliate-webhooks/cli', '--version'],
      app,
    )
    expect(stdout.trim()).toBe('1.0.0')
    const alone = cleanApp(`${which}-cli-alone`)
    await installByName(node.bin, alone, ['@affiliate-webhooks/cli'])
    const lock = JSON.parse(readFileSync(join(alone, 'package-lock.json'), 'utf8'))
    const names = Object.keys(lock.packages).map((path) =>
      path.slice(path.lastIndexOf('node_modules/') + 13),
    )
    for (const driver of ['pg', 'mysql2', 'ioredis', 'bullmq']) expect(names).not.toContain(driver)
  }, 300_000)

  it('the Prisma store with the Postgres store only: no MySQL store installed, and a MySQL client gets the one line naming what to install', async () => {
    const node = nodes[which] as { name: string; bin: string }
    const app = cleanApp(`${which}-prisma-postgres`)
    await installByName(node.bin, app, [
      '@affiliate-webhooks/prisma',
      '@affiliate-webhooks/postgres',
    ])
    const lock = JSON.parse(readFileSync(join(app, 'package-lock.json'), 'utf8'))
    const names = Object.keys(lock.packages).map((path) =>
      path.slice(path.lastIndexOf('node_modules/') + 13),
    )
    expect(names).toContain('@affiliate-webhooks/postgres')
    for (const absent of ['@affiliate-webhooks/mysql', 'mysql2'])
      expect(names).not.toContain(absent)
    // Clients that name their database and fail every query, so ready() shows
    // which store it loaded: Postgres's failure, or the missing MySQL store.
    const probe = (load: string) => `
      const { prismaStore } = ${load}
      const client = (provider) => ({
        _activeProvider: provider,
        $transaction: async () => { throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) },
        $queryRawUnsafe: async () => { throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) },
      })
      for (const provider of ['postgresql', 'mysql']) {
        await prismaStore({ prisma: client(provider), logger: false }).ready().catch((e) => console.log(e.message))
      }`
    for (const [flavour, args] of [
      ['ESM', ['--input-type=module', '-e', probe("await import('@affiliate-webhooks/prisma')")]],
      ['CJS', ['-e', `(async () => { ${probe("require('@affiliate-webhooks/prisma')")} })()`]],
    ] as const) {
      const { stdout } = await onNode(node.bin, 'node', [...args], app)
      const [postgres, mysql] = stdout.trim().split('\n')
      expect(postgres, flavour).toMatch(/^prismaStore: cannot use the PostgreSQL database/)
      expect(mysql, flavour).toBe(
        'prismaStore: the Prisma client is on MySQL/MariaDB, and this store runs there with @affiliate-webhooks/mysql, which is not installed: npm install @affiliate-webhooks/mysql',
      )
    }
  }, 300_000)
})

describe('a second release', () => {
  let second: string
  beforeAll(async () => {
    writeFileSync(
      join(copy, '.changeset', 'second-release.md'),
      '---\n"@affiliate-webhooks/core": patch\n---\n\nA patch after the first release.\n',
    )
    second = await releaseTo(registry, ['--no-checks'], {
      cwd: copy,
      env: { ...process.env, AW_BUILD_CACHE: join(work, 'build-cache') },
    })
  }, 600_000)

  it('a changeset, the version step, the release: 1.0.1 everywhere, published beside 1.0.0', async () => {
    expect(second).toContain('release: version step: 1 changesets')
    expect(new Set(manifests().map((pkg) => pkg.version))).toEqual(new Set(['1.0.1']))
    expect(second).toContain(`release: published ${packages.length} packages at 1.0.1`)
    const app = cleanApp('second')
    const { stdout } = await onNode(
      process.execPath,
      'npm',
      ['view', '@affiliate-webhooks/core', 'versions', '--json'],
      app,
    )
    expect(JSON.parse(stdout)).toEqual(['1.0.0', '1.0.1'])
  })

  it('the new version installs by name, its ranges on the other packages point at it, and the CLI says 1.0.1', async () => {
    const app = cleanApp('second-install')
    await installByName(process.execPath, app, [
      '@affiliate-webhooks/express',
      '@affiliate-webhooks/cli',
    ])
    const express = JSON.parse(
      readFileSync(join(app, 'node_modules/@affiliate-webhooks/express/package.json'), 'utf8'),
    )
    expect(express.version).toBe('1.0.1')
    expect(express.dependencies['@affiliate-webhooks/core']).toBe('1.0.1')
    const core = JSON.parse(
      readFileSync(join(app, 'node_modules/@affiliate-webhooks/core/package.json'), 'utf8'),
    )
    expect(core.version).toBe('1.0.1')
    const { stdout } = await onNode(
      process.execPath,
      join(app, 'node_modules/.bin/affiliate-webhooks'),
      ['--version'],
      app,
    )
    expect(stdout.trim()).toBe('1.0.1')
    const changelog = readFileSync(
      join(app, 'node_modules/@affiliate-webhooks/core/CHANGELOG.md'),
      'utf8',
    )
    expect(changelog).toMatch(/## 1\.0\.1[\s\S]*A patch after the first release[\s\S]*## 1\.0\.0/)
  }, 300_000)
})

describe('a release that fails part way', () => {
  let closedRegistry: LocalRegistry
  let failed: { output: string; code: number } | undefined
  beforeAll(async () => {
    closedRegistry = await startRegistry({ port: 0, closed: ['@affiliate-webhooks/cli'] })
    failed = await releaseTo(closedRegistry, ['--no-version', '--no-build', '--no-checks'], {
      cwd: copy,
    }).then(
      () => undefined,
      (error: { output: string; code: number }) => error,
    )
  }, 300_000)
  afterAll(async () => {
    await closedRegistry?.stop()
  })

  it('names what was published, what failed, and the one command that finishes the rest', async () => {
    expect(failed?.code).toBe(1)
    const output = failed?.output ?? ''
    expect(output).toMatch(/^release: @affiliate-webhooks\/cli failed: .+$/m)
    expect(output).toContain(
      `release: published ${packages.length - 1} of ${packages.length}: @affiliate-webhooks/core,`,
    )
    expect(output).toContain('; not published: @affiliate-webhooks/cli\n')
    const finish = `npm run release -- --registry ${closedRegistry.url} --no-version --skip-published`
    expect(output).toContain(`release: to finish the rest: ${finish}\n`)
    const view = (name: string) =>
      exec('npm', ['view', name, 'version', '--registry', closedRegistry.url]).then(
        ({ stdout }) => stdout.trim(),
        () => 'not found',
      )
    expect(await view('@affiliate-webhooks/core')).toBe('1.0.1')
    expect(await view('@affiliate-webhooks/cli')).toBe('not found')
    // The printed command publishes only what is left (the package checks aside here).
    // The copy's node_modules is the checkout's (a link): its build stamps go elsewhere, or the
    // checkout's next build would find them changed and rebuild under the tests still running.
    const again = await releaseTo(closedRegistry, [...finish.split(' ').slice(6), '--no-checks'], {
      cwd: copy,
      env: { ...process.env, AW_BUILD_CACHE: join(work, 'build-cache') },
    }).then(
      () => '',
      (error: { output: string }) => error.output,
    )
    expect(again).toContain(
      'release: published 0 of 1: none; not published: @affiliate-webhooks/cli',
    )
  }, 300_000)
})

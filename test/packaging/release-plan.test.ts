/**
 * What `npm run release` decides before it runs anything: its options (each mistake
 * one line), the packages and their publishing order, the command that finishes a
 * stopped release.
 */
import { describe, expect, it } from 'vitest'
import {
  finishCommand,
  PUBLIC_REGISTRY,
  parseReleaseArgs,
  publishWaves,
  readPackages,
  showRegistry,
} from '../../scripts/release-plan.mjs'

const root = new URL('../..', import.meta.url).pathname
const options = (argv: string[]) => {
  const parsed = parseReleaseArgs(argv)
  if (!parsed.options) throw new Error(parsed.error)
  return parsed.options
}

describe('release options', () => {
  it('defaults: the public registry, tag latest, every step', () => {
    expect(options([])).toEqual({
      registry: PUBLIC_REGISTRY,
      tag: 'latest',
      out: undefined,
      dryRun: false,
      version: true,
      build: true,
      checks: true,
      skipPublished: false,
    })
  })

  it('reads each flag, with a value after a space or an equals sign', () => {
    expect(
      options([
        '--registry=http://127.0.0.1:4873',
        '--tag',
        'next',
        '--dry-run',
        '--no-version',
        '--no-build',
        '--no-checks',
        '--skip-published',
        '--out',
        'packed',
      ]),
    ).toEqual({
      registry: 'http://127.0.0.1:4873/',
      tag: 'next',
      out: 'packed',
      dryRun: true,
      version: false,
      build: false,
      checks: false,
      skipPublished: true,
    })
  })

  it.each([
    [['--registy', 'x'], 'unknown option --registy'],
    [['--registry'], '--registry needs a value'],
    [['--registry', 'ftp://example.test'], '--registry ftp://example.test is not an http(s) URL'],
    [['--tag', '1.2.3'], '--tag 1.2.3 is not a dist-tag'],
    [['--dry-run=yes'], 'unknown option --dry-run=yes'],
  ])('refuses %j in one line', (argv, start) => {
    const parsed = parseReleaseArgs(argv)
    expect(parsed.error).toMatch(new RegExp(`^${start.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`))
    expect(parsed.error).not.toContain('\n')
  })

  it('never shows a user or password written into the registry URL', () => {
    const registry = options(['--registry', 'https://me:s3cret@registry.example.test/npm']).registry
    expect(showRegistry(registry)).toBe('https://registry.example.test/npm/')
    expect(finishCommand(options(['--registry', registry, '--tag', 'beta']))).toBe(
      'npm run release -- --registry https://registry.example.test/npm/ --tag beta --no-version --skip-published',
    )
    expect(finishCommand(options([]))).toBe('npm run release -- --no-version --skip-published')
  })
})

describe('the packages and their order', () => {
  const packages = readPackages(root)
  const waves = publishWaves(packages)
  const wave = (name: string) => waves.findIndex((names) => names.includes(name))

  it('every published package, each once, the core alone first', () => {
    expect(waves.flat().sort()).toEqual(packages.map((pkg) => pkg.name).sort())
    expect(packages).toHaveLength(18)
    expect(waves[0]).toEqual(['@affiliate-webhooks/core'])
  })

  it('a package comes after every package of this repository it depends on or peers on', () => {
    for (const pkg of packages) {
      const needs = Object.keys({
        ...(pkg.manifest.dependencies as object),
        ...(pkg.manifest.peerDependencies as object),
      }).filter((name) => name.startsWith('@affiliate-webhooks/'))
      for (const need of needs)
        expect(wave(need), `${pkg.name} after ${need}`).toBeLessThan(wave(pkg.name))
    }
  })

  it('a cycle is refused by name', () => {
    const manifest = (name: string, dep: string) => ({
      name,
      version: '1.0.0',
      dir: name,
      manifest: { name, dependencies: { [dep]: '1.0.0' } },
    })
    expect(() => publishWaves([manifest('a', 'b'), manifest('b', 'a')])).toThrow(
      'the packages need each other in a cycle: a, b',
    )
  })
})

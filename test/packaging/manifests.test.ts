/**
 * Every published package's manifest says where it comes from, as its peers'
 * do: `repository` (the root manifest's, the one place the address is written,
 * with the package's own `directory`), `homepage` (its README there), `bugs`
 * (the issue tracker) and `publishConfig` (scoped packages publish public).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = new URL('../..', import.meta.url).pathname
const read = (path: string) => JSON.parse(readFileSync(join(root, path), 'utf8'))
const rootManifest = read('package.json') as { repository: { url: string }; workspaces: string[] }
const dirs = rootManifest.workspaces.filter((dir) => dir.startsWith('packages/'))
/** The repository's web address, from the root manifest's git URL. */
const web = rootManifest.repository.url.replace(/^git\+/, '').replace(/\.git$/, '')

describe('package manifests', () => {
  it('the root manifest names the repository once', () => {
    expect(rootManifest.repository.url).toMatch(/^git\+https:\/\/github\.com\/[^/]+\/[^/]+\.git$/)
    // Every package folder is a workspace, so every published package is checked below.
    const folders = readdirSync(join(root, 'packages')).map((name) => `packages/${name}`)
    expect([...dirs].sort()).toEqual(folders.sort())
  })

  it.each(dirs)('%s: repository with its directory, homepage, bugs, publishConfig', (dir) => {
    const manifest = read(join(dir, 'package.json'))
    expect(manifest.repository).toEqual({
      type: 'git',
      url: rootManifest.repository.url,
      directory: dir,
    })
    expect(manifest.homepage).toBe(`${web}/tree/main/${dir}#readme`)
    expect(manifest.bugs).toEqual({ url: `${web}/issues` })
    expect(manifest.publishConfig).toEqual({ access: 'public' })
  })
})

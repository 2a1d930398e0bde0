/**
 * The docs check (`npm run docs:check`, run by .ci/run) on small fixtures: the
 * link checker finds a missing file and a missing anchor and passes real ones,
 * the tree comparison names stale, missing and extra pages, and TypeDoc's run
 * names an export without TSDoc and writes the same pages wherever it runs.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

interface Links {
  brokenLinks(root: string, files: string[]): string[]
  markdownFiles(root: string): string[]
  slug(heading: string): string
}
interface Docs {
  differences(expectedDir: string, actualDir: string): string[]
  publicEntries(): { name: string; file: string }[]
  generate(
    out: string,
    options: { entries: { name: string; file: string; description: string }[]; tsconfig: string },
  ): Promise<{ errors: number; warnings: number; undocumented: string[] }>
}

// The scripts are plain ESM for node; import them by URL so TypeScript does not resolve them.
const script = (name: string) => new URL(`../../scripts/${name}`, import.meta.url).href
const links = (await import(script('check-links.mjs'))) as Links
const docs = (await import(script('docs.mjs'))) as Docs

let work: string
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'aw-docs-'))
})
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true })
})

function write(path: string, text: string): void {
  mkdirSync(join(path, '..'), { recursive: true })
  writeFileSync(path, text)
}

describe('relative links in the Markdown', () => {
  it('slug() gives GitHub’s anchors', () => {
    expect(links.slug('Over HTTP: `npm run bench:http`')).toBe('over-http-npm-run-benchhttp')
    expect(links.slug('What the receiver answers')).toBe('what-the-receiver-answers')
    expect(links.slug('`affiliateWebhook()`')).toBe('affiliatewebhook')
  })

  it('reports a missing file and a missing anchor, and passes what exists', () => {
    const root = join(work, 'links')
    write(
      join(root, 'README.md'),
      [
        '# Top',
        '[guide](docs/guide.md) [anchor](docs/guide.md#second-part) [dup](docs/guide.md#twice-1)',
        '[html](docs/guide.md#custom) [folder](docs) [web](https://example.com/x.md)',
        '[gone](docs/missing.md) [bad anchor](docs/guide.md#nowhere) [self](#top)',
        '`[in code](nowhere.md)`',
        '```md',
        '[in a fence](nowhere-either.md)',
        '```',
      ].join('\n'),
    )
    write(
      join(root, 'docs/guide.md'),
      '# Guide\n\n## Second part\n\n## Twice\n\n## Twice\n\n<a id="custom"></a>\n',
    )
    const broken = links.brokenLinks(root, links.markdownFiles(root))
    expect(broken).toEqual([
      'README.md:4: docs/missing.md (no such file: docs/missing.md)',
      'README.md:4: docs/guide.md#nowhere (no heading or anchor "nowhere" in docs/guide.md)',
    ])
  })

  it('resolve everywhere in this repository, anchors included', () => {
    const root = new URL('../..', import.meta.url).pathname
    expect(links.brokenLinks(root, links.markdownFiles(root))).toEqual([])
  })

  it('covers the root README, docs/, bench/ and every package and example README', () => {
    const root = new URL('../..', import.meta.url).pathname
    const files = links.markdownFiles(root)
    expect(files).toContain('README.md')
    expect(files).toContain('bench/README.md')
    expect(files).toContain('packages/core/README.md')
    expect(files).toContain('examples/express/README.md')
    expect(files).toContain('docs/api/README.md')
  })
})

describe('the root README', () => {
  it('opens with the two commands a fresh clone runs', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
    const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? ''
    const commands = firstBlock.split('\n').map((line) => line.split('#')[0]?.trim())
    expect(commands.filter(Boolean)).toEqual(['npm ci && npm start', 'npm test'])
  })

  it('gives the stacks whose build loads the route a handler with its options as a function (issue 51)', async () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
    // The one `webhook` the Astro, SvelteKit and React Router lines use.
    const made = readme.split('\n').filter((line) => /\bwebhook = affiliateWebhook\(/.test(line))
    expect(made).toHaveLength(1)
    expect(made[0]).toMatch(
      /affiliateWebhook\(\(\) => \(\{ secret: process\.env\.AFFILIATE_WEBHOOK_SECRET!/,
    )
    // Why it matters: loaded with no secret set, as a build loads it, the object form throws.
    const { affiliateWebhook } = await import('@affiliate-webhooks/web')
    const options = { secret: undefined as unknown as string, onConversion() {} }
    expect(() => affiliateWebhook(options)).toThrow(/`secret` must be a non-empty string/)
    expect(() => affiliateWebhook(() => options)).not.toThrow()
  })
})

describe('the API reference', () => {
  it('comes from every public entry but no /internal one', () => {
    const names = docs.publicEntries().map((entry) => entry.name)
    expect(names).toContain('@affiliate-webhooks/core')
    expect(names).toContain('@affiliate-webhooks/core/testing')
    expect(names.filter((name) => name.endsWith('/internal'))).toEqual([])
  })

  it('names stale, missing and extra pages', () => {
    write(join(work, 'fresh/a.md'), 'a')
    write(join(work, 'fresh/sub/b.md'), 'b')
    write(join(work, 'fresh/c.md'), 'c')
    write(join(work, 'committed/a.md'), 'a')
    write(join(work, 'committed/sub/b.md'), 'old b')
    write(join(work, 'committed/d.md'), 'd')
    expect(docs.differences(join(work, 'fresh'), join(work, 'committed'))).toEqual([
      'missing: c.md',
      'stale: sub/b.md',
      'not generated: d.md',
    ])
  })

  it('names an export without TSDoc, and writes the same pages from two places', async () => {
    const pages: string[] = []
    for (const place of ['one', join('two', 'a', 'much', 'longer', 'path')]) {
      const dir = join(work, 'typedoc', place)
      write(
        join(dir, 'src/index.ts'),
        [
          '/** Adds one. */',
          'export function documented(n: number): number {',
          '  return n + 1',
          '}',
          'export const bare = 1',
        ].join('\n'),
      )
      write(join(dir, 'package.json'), JSON.stringify({ name: 'fixture', type: 'module' }))
      write(
        join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: { strict: true, module: 'NodeNext', target: 'ES2022', noEmit: true },
          include: ['src'],
        }),
      )
      const out = join(dir, 'out')
      const entries = [
        { name: 'fixture', file: join(dir, 'src/index.ts'), description: 'A fixture.' },
      ]
      const result = await docs.generate(out, { entries, tsconfig: join(dir, 'tsconfig.json') })
      expect(result.undocumented).toEqual(['fixture: bare'])
      expect(result.errors).toBeGreaterThan(0)
      pages.push(readFileSync(join(out, 'README.md'), 'utf8'))
    }
    expect(pages[0]).toContain('Adds one.')
    expect(pages[1]).toBe(pages[0])
  }, 120_000)
})

/**
 * The shape asked of the code: no function in a package over 100 lines (a
 * declarative route table excepted). The CLI's line cap is retired (issue 30):
 * it pushed terminal text into libraries.
 */
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { isAbsolute, join, relative } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const root = new URL('../..', import.meta.url).pathname

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sources(path)
    return name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts')
      ? [path]
      : []
  })
}

/** Every package's sources; a package without `src/` or an unreadable file is an error, not an empty list. */
const packageSources = () =>
  readdirSync(join(root, 'packages')).flatMap((pkg) => sources(join(root, 'packages', pkg, 'src')))

/** A file's path from the repository's root, or its whole path when it lies elsewhere. */
function where(file: string): string {
  const inside = relative(root, file)
  return inside.startsWith('..') || isAbsolute(inside) ? file : inside
}

/** Functions longer than `limit` lines: `file:line name (n lines)`. */
function longFunctions(file: string, limit: number): string[] {
  const text = readFileSync(file, 'utf8')
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const found: string[] = []
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart()).line
      const last = source.getLineAndCharacterOfPosition(node.end).line
      const name =
        (node as ts.FunctionDeclaration).name?.getText() ??
        ((node.parent as ts.VariableDeclaration).name?.getText?.() || '(anonymous)')
      if (last - first + 1 > limit) {
        found.push(`${where(file)}:${first + 1} ${name} (${last - first + 1} lines)`)
      }
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

/** A file with one function of 101 lines and one of 100, in `dir`. */
function writeSample(dir: string): string {
  const body = (n: number) => Array.from({ length: n }, (_, i) => `  const a${i} = ${i}`)
  const file = join(dir, 'sample.ts')
  const text = [
    'export function tooLong() {',
    ...body(99),
    '}',
    'export const fits = () => {',
    ...body(98),
    '}',
  ].join('\n')
  writeFileSync(file, text)
  return file
}

describe('code shape', () => {
  it('has no function over 100 lines in packages/*/src, no exemption', () => {
    const files = packageSources()
    // It read every package's sources: a scan of nothing would find nothing too long.
    const scanned = new Set(files.map((file) => where(file).split('/')[1]))
    expect([...scanned].sort()).toEqual(readdirSync(join(root, 'packages')).sort())
    expect(files.map(where)).toContain('packages/core/src/signature/verify.ts')
    const long = files.flatMap((file) => longFunctions(file, 100))
    expect(long).toEqual([])
  })

  it('finds a long function when there is one (the check itself works)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'aw-shape-'))
    try {
      const file = writeSample(dir)
      const found = longFunctions(file, 100)
      expect(found).toHaveLength(1)
      expect(found[0]).toMatch(/sample\.ts:1 tooLong \(101 lines\)$/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('names a file outside the repository by its whole path, however long either path is', () => {
    // A fresh clone may live deeper than the temporary directory, or the other way
    // round: a path cut by the length of the repository's own path lost its start.
    const dir = mkdtempSync(join(tmpdir(), 'aw-shape-'))
    try {
      const deep = join(dir, ...Array.from({ length: 12 }, (_, i) => `level-${i}-of-a-deep-path`))
      expect(deep.length).toBeGreaterThan(root.length)
      mkdirSync(deep, { recursive: true })
      const file = writeSample(deep)
      expect(longFunctions(file, 100)).toEqual([`${file}:1 tooLong (101 lines)`])
      const shallow = writeSample(dir)
      expect(longFunctions(shallow, 100)).toEqual([`${shallow}:1 tooLong (101 lines)`])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

/**
 * Every TypeScript block of the READMEs (the root one, each package's and each
 * example's) compiles as written, with the TypeScript of the repository, against
 * the built packages' types and the frameworks' own.
 *
 * A snippet leaves some names to the reader (`app`, `onConversion`, `store`...):
 * each name no import or declaration in the block gives is declared `any`, and
 * an app-local module (`./generated/...`, `#lib/...`) is declared as a shorthand
 * ambient module, so what is checked is what the block itself says: its imports,
 * the names it takes from them, and every option, handler and call it writes.
 * A README that shows a Prisma schema (a ```prisma block, or an example's own
 * `prisma/schema.prisma`) gets its client generated from that schema, and its
 * TypeScript compiles against that client.
 * A block after `<!-- snippets: ... -->` is a list of one-line uses of several
 * stacks: each paragraph of it compiles on its own.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { afterAll, describe, expect, it } from 'vitest'
import { generatePrismaClient } from '../sql/prisma-clients.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
/** Inside the workspace (git-ignored), so packages resolve as in an app of the monorepo. */
const work = join(root, '.tmp', `readme-code-${process.pid}`)
afterAll(() => rmSync(work, { recursive: true, force: true }))

interface Block {
  readme: string
  line: number
  text: string
  /** A snippets block's leading imports, compiled with each of its paragraphs (on their first line). */
  lead?: string
  /** The README's Prisma schema, when it shows one. */
  prismaSchema: string | undefined
}

const readmes = (): string[] => [
  'README.md',
  ...['packages', 'examples'].flatMap((dir) =>
    readdirSync(join(root, dir))
      .map((name) => `${dir}/${name}/README.md`)
      .filter((path) => {
        try {
          readFileSync(join(root, path))
          return true
        } catch {
          return false
        }
      }),
  ),
]

/** The TypeScript blocks of one README, a snippets block split into its paragraphs. */
function blocksOf(readme: string): Block[] {
  const lines = readFileSync(join(root, readme), 'utf8').split('\n')
  const blocks: Block[] = []
  let prismaSchema: string | undefined
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\w*)$/.exec(lines[i] as string)?.[1]
    if (fence === undefined || fence === '') continue
    const end = lines.findIndex((text, j) => j > i && text.startsWith('```'))
    const body = lines.slice(i + 1, end)
    if (fence === 'prisma') prismaSchema = body.join('\n')
    if (['ts', 'typescript', 'tsx'].includes(fence)) {
      const snippets =
        /<!-- snippets:/.test(lines[i - 1] ?? '') || /<!-- snippets:/.test(lines[i - 2] ?? '')
      const parts = snippets ? paragraphs(body, i + 2) : [{ line: i + 2, text: body.join('\n') }]
      for (const part of parts) blocks.push({ readme, ...part, prismaSchema: undefined })
    }
    i = end
  }
  // A schema shown anywhere in the README is the one its code compiles against;
  // an example's README, its app's own schema.
  const own = join(root, readme, '..', 'prisma', 'schema.prisma')
  if (prismaSchema === undefined && existsSync(own)) prismaSchema = readFileSync(own, 'utf8')
  return blocks.map((block) => ({ ...block, prismaSchema }))
}

function paragraphs(
  body: string[],
  firstLine: number,
): { line: number; text: string; lead?: string }[] {
  const parts: { line: number; text: string }[] = []
  let start = 0
  for (let j = 0; j <= body.length; j++) {
    if (j < body.length && (body[j] as string).trim() !== '') continue
    const text = body.slice(start, j).join('\n')
    if (text.trim() !== '') parts.push({ line: firstLine + start, text })
    start = j + 1
  }
  // A first paragraph of imports only is what every other paragraph uses.
  const [head, ...rest] = parts
  const code = (head?.text ?? '').split('\n').filter((line) => !line.startsWith('//'))
  if (head === undefined || !code.every((line) => line.startsWith('import '))) return parts
  return rest.map((part) => ({ ...part, lead: code.join('; ') }))
}

const OPTIONS: ts.CompilerOptions = {
  strict: true,
  // A parameter of a callback given to a name left to the reader (\`app.post(..., (c) => ...)\`)
  // has no type to take; a handler given to the packages' own functions is typed by them.
  noImplicitAny: false,
  noEmit: true,
  target: ts.ScriptTarget.ES2023,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
  types: ['node'],
  jsx: ts.JsxEmit.ReactJSX,
  experimentalDecorators: true,
  skipLibCheck: true,
}

/** Names the block leaves to the reader, from one compile's diagnostics. */
function freeNames(diagnostics: readonly ts.Diagnostic[]): {
  names: Set<string>
  modules: Set<string>
} {
  const names = new Set<string>()
  const modules = new Set<string>()
  for (const d of diagnostics) {
    const message = ts.flattenDiagnosticMessageText(d.messageText, '\n')
    // 2304/2552: cannot find name; 2503: namespace; 2580/2591/2867/2868: a runtime's globals;
    // 18004: a shorthand property's value.
    if ([2304, 2552, 2503, 2580, 2591, 2867, 2868, 18004].includes(d.code)) {
      const name = /'([\w$]+)'/.exec(message)?.[1]
      if (name !== undefined) names.add(name)
    }
    // An app's own module (a path or an import alias), never a package.
    if (d.code === 2307) {
      const specifier = /'([^']+)'/.exec(message)?.[1]
      if (specifier !== undefined && /^[.#$~]/.test(specifier)) modules.add(specifier)
    }
  }
  return { names, modules }
}

/** The one line that declares the names left to the reader, module-scoped. */
function declarations(names: Set<string>, qualified: Map<string, Set<string>>): string {
  return [...names]
    .map((name) => {
      const members = [...(qualified.get(name) ?? [])].map((member) => `type ${member} = any`)
      return members.length > 0
        ? `declare const ${name}: any; declare namespace ${name} { ${members.join('; ')} }`
        : `declare const ${name}: any; type ${name} = any;`
    })
    .join(' ')
}

interface Compiled {
  block: Block
  errors: string[]
}

/**
 * Compiles the blocks as modules of one program, twice: first to learn the names
 * left to the reader, then with them declared on the block's first line (kept
 * empty the first time, so line numbers hold).
 */
function compile(blocks: Block[], dir: (block: Block) => string): Compiled[] {
  const files = blocks.map((block, n) => {
    mkdirSync(dir(block), { recursive: true })
    return join(dir(block), `block-${n}.ts`)
  })
  const write = (n: number, first: string) => {
    const { lead, text } = blocks[n] as Block
    writeFileSync(
      files[n] as string,
      `${lead === undefined ? '' : `${lead}; `}${first}\n${text}\nexport {}\n`,
    )
  }
  for (const n of files.keys()) write(n, '')
  const first = ts.createProgram(files, OPTIONS)
  const modules = new Set<string>()
  for (const [n, file] of files.entries()) {
    const source = first.getSourceFile(file) as ts.SourceFile
    const found = freeNames(ts.getPreEmitDiagnostics(first, source))
    for (const specifier of found.modules) modules.add(specifier)
    const qualified = new Map<string, Set<string>>()
    for (const match of source.text.matchAll(/\b([A-Z]\w*)\.(\w+)\b/g)) {
      const [, name, member] = match as unknown as [string, string, string]
      if (found.names.has(name)) qualified.set(name, (qualified.get(name) ?? new Set()).add(member))
    }
    write(n, declarations(found.names, qualified))
  }
  // An app's own modules, for every block: shorthand ambient modules (all their names any).
  const shims = join(work, 'app-modules.d.ts')
  mkdirSync(work, { recursive: true })
  writeFileSync(shims, [...modules].map((specifier) => `declare module '${specifier}'`).join('\n'))
  const second = ts.createProgram([...files, shims], OPTIONS)
  return blocks.map((block, n) => {
    const source = second.getSourceFile(files[n] as string) as ts.SourceFile
    const errors = ts.getPreEmitDiagnostics(second, source).map((d) => {
      const { line } = source.getLineAndCharacterOfPosition(d.start ?? 0)
      const text = ts.flattenDiagnosticMessageText(d.messageText, ' ')
      return `${block.readme}:${block.line + line - 1}: TS${d.code} ${text}`
    })
    return { block, errors }
  })
}

describe('the READMEs’ TypeScript blocks', () => {
  const blocks = readmes().flatMap(blocksOf)

  it('finds the blocks of the root README, the packages and the examples', () => {
    const where = new Set(blocks.map((block) => block.readme))
    expect(where).toContain('README.md')
    expect(where).toContain('packages/prisma/README.md')
    expect(where).toContain('examples/sveltekit/README.md')
    expect(blocks.length).toBeGreaterThan(40)
  })

  it('each compiles as written (a Prisma README against the client of the schema it shows)', async () => {
    const schemas = new Map<string, string>()
    for (const block of blocks) {
      if (block.prismaSchema === undefined || schemas.has(block.readme)) continue
      const dir = join(work, block.readme.replace(/\W+/g, '-'))
      await generatePrismaClient(block.prismaSchema, join(dir, 'generated', 'prisma'))
      schemas.set(block.readme, dir)
    }
    const compiled = compile(
      blocks,
      (block) => schemas.get(block.readme) ?? join(work, block.readme.replace(/\W+/g, '-')),
    )
    const errors = compiled.flatMap(({ errors }) => errors)
    expect(errors, errors.join('\n')).toEqual([])
    expect(relative(root, work).startsWith('.tmp')).toBe(true)
  }, 180_000)

  it('a wrong option, import or type in a block is caught', () => {
    const wrong: Block[] = [
      {
        readme: 'wrong.md',
        line: 1,
        prismaSchema: undefined,
        text: "import { affiliateWebhook } from '@affiliate-webhooks/express'\napp.post('/hooks', affiliateWebhook({ secrett: 'x', onConversion }))",
      },
      {
        readme: 'wrong.md',
        line: 1,
        prismaSchema: undefined,
        text: "import { affiliateHook } from '@affiliate-webhooks/express'",
      },
      {
        readme: 'wrong.md',
        line: 1,
        prismaSchema: undefined,
        text: "import { createReceiver } from '@affiliate-webhooks/core'\ncreateReceiver({ secret: 'x', onConversion: async (conversion) => { const n: number = conversion.commission } })",
      },
    ]
    const compiled = compile(wrong, () => join(work, 'wrong'))
    expect(compiled.map(({ errors }) => errors.length > 0)).toEqual([true, true, true])
  })
})

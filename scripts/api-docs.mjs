// Writes each package's "API" README section from the TSDoc of what its entry
// exports, between <!-- api:start --> and <!-- api:end -->.
//   node scripts/api-docs.mjs          rewrite the sections
//   node scripts/api-docs.mjs --check  exit 1 if a section is stale or an export has no TSDoc
//   either one followed by package dirs: only those packages
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'

const START = '<!-- api:start -->'
const END = '<!-- api:end -->'

/** Entry files of one package: the main one and any subpath (e.g. core/testing). */
function entries(dir) {
  const list = [{ subpath: '', file: join(dir, 'src/index.ts') }]
  if (existsSync(join(dir, 'src/testing/index.ts'))) {
    list.push({ subpath: '/testing', file: join(dir, 'src/testing/index.ts') })
  }
  return list
}

const flat = (text) => text.replace(/\s+/g, ' ').trim()

function describeSymbol(checker, symbol) {
  const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
  const docs = flat(ts.displayPartsToString(target.getDocumentationComment(checker)))
  const declaration = target.declarations?.[0]
  let kind = 'const'
  let signature = ''
  const rows = []
  if (
    declaration &&
    (ts.isFunctionDeclaration(declaration) || target.flags & ts.SymbolFlags.Function)
  ) {
    kind = 'function'
    const type = checker.getTypeOfSymbol(target)
    signature = type
      .getCallSignatures()
      .map(
        (s) =>
          `${symbol.name}${checker.signatureToString(s, undefined, ts.TypeFormatFlags.NoTruncation)}`,
      )
      .join('\n')
  } else if (target.flags & ts.SymbolFlags.Class) {
    kind = 'class'
  } else if (target.flags & ts.SymbolFlags.Interface) {
    kind = 'interface'
    for (const member of checker.getDeclaredTypeOfSymbol(target).getProperties()) {
      const memberType = checker.typeToString(
        checker.getTypeOfSymbol(member),
        undefined,
        ts.TypeFormatFlags.NoTruncation,
      )
      const optional = member.flags & ts.SymbolFlags.Optional ? '?' : ''
      rows.push([
        `${member.name}${optional}`,
        memberType,
        flat(ts.displayPartsToString(member.getDocumentationComment(checker))),
      ])
    }
  } else if (target.flags & ts.SymbolFlags.TypeAlias) {
    kind = 'type'
    signature = `type ${symbol.name} = ${flat(declaration.type.getText())}`
  } else {
    signature = `const ${symbol.name}: ${checker.typeToString(checker.getTypeOfSymbol(target), undefined, ts.TypeFormatFlags.NoTruncation)}`
  }
  return { name: symbol.name, kind, docs, signature, rows }
}

function render(subpath, pkgName, items) {
  const lines = [`### \`${pkgName}${subpath}\``, '']
  for (const item of items) {
    lines.push(`#### \`${item.name}\` (${item.kind})`, '', item.docs, '')
    if (item.signature) lines.push('```ts', item.signature, '```', '')
    if (item.rows.length > 0) {
      lines.push('| property | type | |', '| --- | --- | --- |')
      for (const [name, type, doc] of item.rows) {
        lines.push(
          `| \`${name}\` | \`${type.replaceAll('|', '\\|')}\` | ${doc.replaceAll('|', '\\|')} |`,
        )
      }
      lines.push('')
    }
  }
  return lines.join('\n')
}

export function apiSection(dir) {
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  const list = entries(dir)
  const program = ts.createProgram(
    list.map((e) => e.file),
    {
      strict: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      skipLibCheck: true,
      noEmit: true,
    },
  )
  const checker = program.getTypeChecker()
  const missing = []
  const parts = []
  for (const { subpath, file } of list) {
    const source = program.getSourceFile(file)
    const exported = checker.getExportsOfModule(checker.getSymbolAtLocation(source))
    const items = exported.map((symbol) => describeSymbol(checker, symbol))
    for (const item of items) if (!item.docs) missing.push(`${pkg.name}${subpath}: ${item.name}`)
    parts.push(render(subpath, pkg.name, items))
  }
  return {
    text: `${START}\n\n## API\n\nGenerated from the TSDoc in the source by \`npm run docs\`.\n\n${parts.join('\n')}\n${END}`,
    missing,
  }
}

export function packageDirs() {
  const root = JSON.parse(readFileSync('package.json', 'utf8'))
  return root.workspaces.filter((w) => w.startsWith('packages/'))
}

function splice(readme, section) {
  const start = readme.indexOf(START)
  const end = readme.indexOf(END)
  if (start === -1 || end === -1) return `${readme.trimEnd()}\n\n${section}\n`
  return `${readme.slice(0, start)}${section}${readme.slice(end + END.length)}`
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop())) {
  const check = process.argv.includes('--check')
  let failed = false
  const named = process.argv.slice(2).filter((arg) => !arg.startsWith('--'))
  for (const dir of named.length > 0 ? named : packageDirs()) {
    const readmePath = join(dir, 'README.md')
    const readme = existsSync(readmePath) ? readFileSync(readmePath, 'utf8') : ''
    const { text, missing } = apiSection(dir)
    for (const name of missing) {
      console.error(`no TSDoc: ${name}`)
      failed = true
    }
    const next = splice(readme, text)
    if (check) {
      if (next !== readme) {
        console.error(`${readmePath}: API section is stale; run npm run docs`)
        failed = true
      }
    } else if (next !== readme) {
      writeFileSync(readmePath, next)
      console.log(`wrote ${readmePath}`)
    }
  }
  process.exit(failed ? 1 : 0)
}

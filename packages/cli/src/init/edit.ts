/**
 * The edit `init` makes to an app's own file (Express, Fastify, Koa, Hono,
 * Nest): the import of the module it writes, and the mount statement where it
 * works. The file is parsed with @babel/parser (TypeScript and JavaScript, ESM
 * and CommonJS); the parse finds the one app variable and the statement to put
 * the mount after or before, and the edit inserts whole lines at those offsets,
 * so nothing else in the file is reprinted: the user's quotes, semicolons and
 * layout stay as they were. The result is parsed again before it is offered.
 *
 * Why @babel/parser and not a reprinting tool: the edits are two inserted
 * statements, never a changed node, so recast's or magicast's reprinting (which
 * prints new nodes in its own style: semicolons, double quotes) brings nothing
 * but 2-3 MB more; ts-morph ships the TypeScript compiler (tens of MB) with
 * every install of the CLI. @babel/parser alone parses every syntax these apps
 * use (TypeScript with decorators, JSX, top-level await) and has no native
 * part. It is loaded with a dynamic import, only when `init` plans an edit, so
 * the CLI's cold start never reads it.
 *
 * When it cannot be sure, it edits nothing and says why: a parse error, no app
 * made in the file (made in another one?), several apps, a name it would add
 * already taken, or an `await` where none is allowed (Fastify in CommonJS).
 */

/** What the edit needs to know of the app and of the lines `init` prints. */
export interface EditInput {
  /** The stack's id: `express`, `fastify`, `koa`, `hono` or `nest`. */
  stack: string
  /** The file, relative to the app (its extension says TypeScript, ESM or CommonJS). */
  file: string
  source: string
  /** `"type": "module"` in the app's package.json. */
  esm: boolean
  /** The import line `init` prints (`import { webhook } from './affiliate-webhooks.js'`). */
  importLine: string
  /** The mount statement `init` prints, naming the app `app`. */
  mountLine: string
}

/** The edited text, or why the file is left alone. */
export type EditResult = { text: string; where: string } | { refused: string }

// Babel's node shapes, as far as this file reads them.
interface Node {
  type: string
  start: number
  end: number
  [key: string]: unknown
}

/** What each stack's app is made with, and where its mount goes. */
interface AppRule {
  /** The module whose export makes the app, and which export (`default`, or a name). */
  from: readonly string[]
  exported: readonly string[]
  /** `new X()` or `X()`; `NestFactory.create` is a member call. */
  made: 'new' | 'call' | 'member'
  member?: string
  /** The mount needs `await` (Fastify's register). */
  awaits: boolean
  /** Calls of these imports inside `app.use(...)` are the body parsers to go before. */
  bodyParsers?: readonly string[]
  /** A module whose import in the file means the mount does not fit, and why. */
  notWith?: { from: string; why: string }
  where: string
  /**
   * The file may make no app and export a plugin instead (`export default async
   * (fastify, opts) => { ... }`, as fastify-cli's app.ts): the mount then goes
   * first in that function, on its first parameter.
   */
  plugin?: string
}

const RULES: Record<string, AppRule> = {
  express: {
    from: ['express'],
    exported: ['default'],
    made: 'call',
    awaits: false,
    where: 'right after the app is made, before any app.use(express.json()) or body parser',
  },
  fastify: {
    from: ['fastify'],
    exported: ['default', 'fastify', 'Fastify'],
    made: 'call',
    awaits: true,
    where: 'right after the Fastify instance is made, before listen',
    plugin:
      "first in the plugin the file exports (the instance it is given), inside the plugin's own context",
  },
  koa: {
    from: ['koa'],
    exported: ['default'],
    made: 'new',
    awaits: false,
    bodyParsers: ['koa-bodyparser', '@koa/bodyparser', 'koa-body'],
    where: 'before the first body parser app.use(...) (else right after the app is made)',
  },
  hono: {
    from: ['hono', 'hono/tiny', 'hono/quick'],
    exported: ['Hono'],
    made: 'new',
    awaits: false,
    where: 'right after new Hono(), before the app is exported or served',
  },
  nest: {
    from: ['@nestjs/core'],
    exported: ['NestFactory'],
    made: 'member',
    member: 'create',
    awaits: false,
    notWith: {
      from: '@nestjs/platform-fastify',
      why: "the app runs on Nest's Fastify platform, and the mount is Express middleware",
    },
    where: 'right after NestFactory.create(...), before app.listen(...)',
  },
}

/** Whether `init` can edit this stack's app file at all. */
export const editable = (stack: string): boolean => stack in RULES

type Parse = typeof import('@babel/parser').parse

interface Parsed {
  program: Node
  /** `import` syntax: any TypeScript file, or an ES module. */
  module: boolean
  /** `await` allowed at the top level: an ES module once run (TypeScript compiled to CommonJS allows none). */
  esModule: boolean
}

/**
 * Parses the file as what its extension and package.json say; a `.js` file
 * that only parses as the other kind is that kind (Node runs a `.js` file with
 * `import` syntax as ESM in a package without `"type"`).
 */
function parseWith(parse: Parse, source: string, file: string, esm: boolean): Parsed | string {
  const typescript = /\.[cm]?tsx?$/.test(file)
  const fixed = /\.[cm][jt]s$/.test(file)
  const declared = /\.m[jt]s$/.test(file) || (!/\.c[jt]s$/.test(file) && esm)
  const attempt = (asModule: boolean) =>
    parse(source, {
      sourceType: asModule || typescript ? 'module' : 'script',
      allowReturnOutsideFunction: !asModule && !typescript,
      plugins: typescript ? ['typescript', 'decorators-legacy'] : ['jsx'],
    }).program as unknown as Node
  let first: Error | undefined
  for (const asModule of fixed || typescript ? [declared] : [declared, !declared]) {
    try {
      const program = attempt(asModule)
      return { program, module: asModule || typescript, esModule: asModule }
    } catch (error) {
      first ??= error as Error
    }
  }
  return `it does not parse (${first?.message.split('\n')[0]})`
}

/** Every node below `node`, with the statement list it sits in and whether it is in an async scope. */
function* walk(
  node: Node,
  scope: { async: boolean; top: boolean } = { async: false, top: true },
  list?: { body: Node[]; index: number },
): Generator<{ node: Node; scope: typeof scope; list: typeof list }> {
  yield { node, scope, list }
  const fn = /Function|Method/.test(node.type)
  const inner = fn ? { async: node.async === true, top: false } : scope
  for (const [key, value] of Object.entries(node)) {
    if (key === 'loc' || key === 'extra' || !value || typeof value !== 'object') continue
    if (Array.isArray(value)) {
      const statements = key === 'body' || key === 'consequent'
      for (const [index, child] of value.entries()) {
        if (child && typeof child.type === 'string')
          yield* walk(child, inner, statements ? { body: value, index } : undefined)
      }
    } else if (typeof (value as Node).type === 'string') {
      // `export const app = ...` sits in the list its export statement is in.
      const exported = node.type === 'ExportNamedDeclaration' && key === 'declaration'
      yield* walk(value as Node, inner, exported ? list : undefined)
    }
  }
}

/** The local names the app's module is imported or required under, for `exported`. */
function localNames(program: Node, rule: AppRule): Set<string> {
  const names = new Set<string>()
  for (const { node } of walk(program)) {
    if (node.type === 'ImportDeclaration' && rule.from.includes(str(node.source))) {
      for (const spec of node.specifiers as Node[]) {
        const imported = spec.type === 'ImportSpecifier' ? name(spec.imported as Node) : 'default'
        if (rule.exported.includes(imported)) names.add(name(spec.local as Node))
      }
    }
    if (node.type === 'VariableDeclarator' && isRequire(node.init as Node, rule.from)) {
      const id = node.id as Node
      if (id.type === 'Identifier' && rule.exported.includes('default')) names.add(name(id))
      if (id.type === 'ObjectPattern') {
        for (const prop of id.properties as Node[]) {
          if (prop.type === 'ObjectProperty' && rule.exported.includes(name(prop.key as Node)))
            names.add(name(prop.value as Node))
        }
      }
    }
  }
  return names
}

/** Whether the file imports or requires `from`. */
const imports = (program: Node, from: string) =>
  [...walk(program)].some(
    ({ node }) =>
      (node.type === 'ImportDeclaration' && str(node.source) === from) || isRequire(node, [from]),
  )

const name = (node: Node | undefined) => (node?.name as string | undefined) ?? ''
const str = (node: unknown) => ((node as Node | undefined)?.value as string | undefined) ?? ''
const isRequire = (node: Node | undefined, from: readonly string[]) =>
  node?.type === 'CallExpression' &&
  name(node.callee as Node) === 'require' &&
  from.includes(str((node.arguments as Node[])[0]))

/** Strips `await`, `as`, `!` and parentheses around an expression. */
function bare(node: Node | undefined): Node | undefined {
  let at = node
  while (
    at &&
    /^(AwaitExpression|TSAsExpression|TSNonNullExpression|ParenthesizedExpression|TSSatisfiesExpression)$/.test(
      at.type,
    )
  )
    at = (at.argument ?? at.expression) as Node
  return at
}

/** Whether `init` makes the app: `express()`, `new Koa()`, `NestFactory.create(...)`. */
function makesApp(init: Node | undefined, rule: AppRule, names: Set<string>): boolean {
  const node = bare(init)
  if (!node) return false
  const callee = node.callee as Node | undefined
  if (rule.made === 'new') return node.type === 'NewExpression' && names.has(name(callee))
  if (node.type !== 'CallExpression' || !callee) return false
  if (rule.made === 'call') return names.has(name(callee)) || isRequire(callee, rule.from)
  return (
    callee.type === 'MemberExpression' &&
    names.has(name(callee.object as Node)) &&
    name(callee.property as Node) === rule.member
  )
}

/** The line `source` has at `offset`, its start and its indentation. */
function lineAt(source: string, offset: number) {
  const start = source.lastIndexOf('\n', offset - 1) + 1
  const indent = /^[ \t]*/.exec(source.slice(start))?.[0] ?? ''
  return { start, indent }
}

/** Where the import goes: after the last top-level import or require, else at the top. */
function importOffset(source: string, program: Node): number {
  let after: Node | undefined
  for (const statement of program.body as Node[]) {
    const declarations = (statement.declarations as Node[] | undefined) ?? []
    const required = declarations.some(
      (d) =>
        bare(d.init as Node)?.type === 'CallExpression' &&
        name((bare(d.init as Node) as Node).callee as Node) === 'require',
    )
    if (statement.type === 'ImportDeclaration' || required) after = statement
  }
  if (after) return endOfLine(source, after.end)
  const directives = program.directives as Node[] | undefined
  const last = directives?.at(-1)
  return last ? endOfLine(source, last.end) : 0
}

const endOfLine = (source: string, offset: number) => {
  const end = source.indexOf('\n', offset)
  return end === -1 ? source.length : end + 1
}

/**
 * Inserts `line` (one line, no newline) at `offset`, which is a line start or
 * the end, ending it as the file ends its lines (CRLF or LF).
 */
function insert(source: string, offset: number, line: string): string {
  const eol = source.includes('\r\n') ? '\r\n' : '\n'
  const gap = offset === source.length && !source.endsWith('\n') && source !== '' ? eol : ''
  return `${source.slice(0, offset)}${gap}${line}${eol}${source.slice(offset)}`
}

/** Only blanks and a line comment between `from` and `to`: no other code shares the line. */
const lineRestIsEmpty = (source: string, from: number, to: number) =>
  /^[ \t]*(\/\/[^\n]*)?\r?\n?$/.test(source.slice(from, to))

/** The import in the file's own module system. */
function importFor(input: EditInput, module: boolean, semicolons: boolean): string {
  const [, names, from] = /^import (\{[^}]*\}) from '([^']+)'$/.exec(input.importLine) ?? []
  if (!names || !from) return input.importLine
  const line = module ? input.importLine : `const ${names} = require('${from}')`
  return semicolons ? `${line};` : line
}

/** The edited text of the app's file, or why it is left alone. */
export async function editAppFile(input: EditInput): Promise<EditResult> {
  const rule = RULES[input.stack]
  if (!rule) return { refused: `init does not edit a ${input.stack} app's file` }
  const { parse } = await import('@babel/parser')
  const parsed = parseWith(parse, input.source, input.file, input.esm)
  if (typeof parsed === 'string') return { refused: parsed }
  const { program, module, esModule } = parsed
  if (rule.notWith && imports(program, rule.notWith.from)) return { refused: rule.notWith.why }
  const names = localNames(program, rule)
  const added = [...input.mountLine.matchAll(/\b(webhook|registerWebhook)\b/g)].map((m) => m[1])
  const apps: {
    node: Node
    scope: { async: boolean; top: boolean }
    list: { body: Node[]; index: number } | undefined
    id: string
  }[] = []
  for (const { node, scope, list } of walk(program)) {
    if (node.type === 'Identifier' && added.includes(name(node)))
      return { refused: `the name ${name(node)} is already used in the file` }
    if (node.type !== 'VariableDeclaration') continue
    for (const declarator of node.declarations as Node[]) {
      if (
        (declarator.id as Node).type === 'Identifier' &&
        makesApp(declarator.init as Node, rule, names)
      )
        apps.push({ node, scope, list, id: name(declarator.id as Node) })
    }
  }
  if (apps.length === 0) {
    const plugin = rule.plugin ? exportedPlugin(program) : undefined
    if (plugin && rule.plugin) return mountInPlugin(input, parse, parsed, plugin, rule.plugin)
    return { refused: 'no app is made in this file (is it made in another one?)' }
  }
  if (apps.length > 1)
    return {
      refused: `${apps.length} apps are made in this file (${apps.map((a) => a.id).join(', ')}): which one is not sure`,
    }
  const [app] = apps as [(typeof apps)[number]]
  if (!app.list) return { refused: `the app ${app.id} is not made in a plain statement` }
  if (rule.awaits && !(app.scope.top ? esModule : app.scope.async))
    return {
      refused: `the mount needs await, which is not allowed where ${app.id} is made (${app.scope.top ? 'the top level of a CommonJS module' : 'a function that is not async'})`,
    }
  const semicolons = input.source.slice(app.node.start, app.node.end).trimEnd().endsWith(';')
  // The app's own name: \`app\` followed by . or ), never a part of the route's path.
  const mount = `${input.mountLine.replace(/(?<![\w/'.-])app\b(?=[.)])/g, app.id)}${semicolons ? ';' : ''}`
  const before = bodyParserAfter(program, rule, app.list, app.id)
  const { start, indent } = lineAt(input.source, (before ?? app.node).start)
  const mountAt = before ? start : endOfLine(input.source, app.node.end)
  // The mount goes on a line of its own: where the app's statement shares its
  // line with other code (`const app = express(); app.use(express.json())`), a
  // line before or after would mount it before the app exists or after the parser.
  if (before ? start < app.node.end : !lineRestIsEmpty(input.source, app.node.end, mountAt))
    return {
      refused: `other code shares the line where ${app.id} is made, so no line of its own puts the mount in the right place`,
    }
  const importAt = importOffset(input.source, program)
  const importLine = importFor(input, module, semicolons)
  // The later offset first, so the earlier one still points where it did.
  const text =
    importAt <= mountAt
      ? insert(insert(input.source, mountAt, `${indent}${mount}`), importAt, importLine)
      : insert(insert(input.source, importAt, importLine), mountAt, `${indent}${mount}`)
  const check = parseWith(parse, text, input.file, input.esm)
  if (typeof check === 'string') return { refused: `the edited file would not parse: ${check}` }
  return { text, where: rule.where }
}

/** The first `app.use(bodyParser())` after the app's statement in the same list, for Koa. */
function bodyParserAfter(
  program: Node,
  rule: AppRule,
  list: { body: Node[]; index: number },
  id: string,
): Node | undefined {
  if (!rule.bodyParsers) return undefined
  const parsers = localNames(program, { ...rule, from: rule.bodyParsers, exported: ['default'] })
  return list.body.slice(list.index + 1).find((statement) => {
    const call =
      statement.type === 'ExpressionStatement' ? (statement.expression as Node) : undefined
    const callee = call?.callee as Node | undefined
    if (call?.type !== 'CallExpression' || callee?.type !== 'MemberExpression') return false
    if (name(callee.object as Node) !== id || name(callee.property as Node) !== 'use') return false
    const argument = (call.arguments as Node[])[0]
    return argument?.type === 'CallExpression' && parsers.has(name(argument.callee as Node))
  })
}

/**
 * The async function the file exports as its plugin, and the name of its first
 * parameter: `export default async function (fastify, opts) {}`, `export
 * default app` with `const app = async (fastify) => {}` (a type annotation
 * allowed), or `module.exports = async function (fastify) {}`.
 */
function exportedPlugin(program: Node): { fn: Node; param: string } | undefined {
  const functions = /^(FunctionDeclaration|FunctionExpression|ArrowFunctionExpression)$/
  let exported: Node | undefined
  for (const statement of program.body as Node[]) {
    if (statement.type === 'ExportDefaultDeclaration') exported = statement.declaration as Node
    const assigned =
      statement.type === 'ExpressionStatement' ? (statement.expression as Node) : undefined
    const left = assigned?.left as Node | undefined
    if (
      assigned?.type === 'AssignmentExpression' &&
      left?.type === 'MemberExpression' &&
      name(left.object as Node) === 'module' &&
      name(left.property as Node) === 'exports'
    )
      exported = assigned.right as Node
  }
  let fn = bare(exported)
  if (fn?.type === 'Identifier') {
    const wanted = name(fn)
    fn = undefined
    for (const { node } of walk(program)) {
      if (node.type === 'VariableDeclarator' && name(node.id as Node) === wanted)
        fn = bare(node.init as Node)
      if (node.type === 'FunctionDeclaration' && name(node.id as Node) === wanted) fn = node
    }
  }
  if (!fn || !functions.test(fn.type) || fn.async !== true) return undefined
  const body = fn.body as Node
  const [param] = fn.params as Node[]
  if (body.type !== 'BlockStatement' || param?.type !== 'Identifier') return undefined
  return { fn, param: name(param) }
}

/** The mount as the first statement of the exported plugin, on its own parameter. */
function mountInPlugin(
  input: EditInput,
  parse: Parse,
  parsed: Parsed,
  plugin: { fn: Node; param: string },
  where: string,
): EditResult {
  const body = plugin.fn.body as Node
  const first = (body.body as Node[])[0]
  if (!first) return { refused: 'the plugin the file exports is empty: which place is not sure' }
  const { start, indent } = lineAt(input.source, first.start)
  if (start <= body.start)
    return { refused: "other code shares the line where the plugin's body starts" }
  const semicolons = input.source.slice(first.start, first.end).trimEnd().endsWith(';')
  const mount = `${input.mountLine.replace(/(?<![\w/'.-])app\b(?=[.)])/g, plugin.param)}${semicolons ? ';' : ''}`
  const importAt = importOffset(input.source, parsed.program)
  const importLine = importFor(input, parsed.module, semicolons)
  // The later offset first, so the earlier one still points where it did.
  const text =
    importAt <= start
      ? insert(insert(input.source, start, `${indent}${mount}`), importAt, importLine)
      : insert(insert(input.source, importAt, importLine), start, `${indent}${mount}`)
  const check = parseWith(parse, text, input.file, input.esm)
  if (typeof check === 'string') return { refused: `the edited file would not parse: ${check}` }
  return { text, where }
}

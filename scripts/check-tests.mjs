// Keeps the tests honest, as `npm run lint` runs it (`npm run lint:tests`):
// - no `.skip`, `.only`, `.todo`, `skipIf` or `runIf` anywhere in the tests: a
//   test that does not run proves nothing, and `.only` silently drops the rest;
// - no `try { ... expect.unreachable() ... } catch (error) { ... }` whose catch
//   does not assert on the error it caught: the error `expect.unreachable()`
//   throws lands in that catch too, so checks that it also satisfies (text that
//   does not contain a secret, a defined value) pass when nothing was thrown.
// `node scripts/check-tests.mjs [file ...]` checks the files given, else every
// test source of the repository. Exit 1 with one line per finding.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import ts from 'typescript'

const root = new URL('..', import.meta.url).pathname
const SKIPPING = new Set(['skip', 'only', 'todo', 'skipIf', 'runIf'])
/** Matchers the error of `expect.unreachable()` satisfies as well as any other. */
const WEAK = new Set([
  'toBeDefined',
  'toBeTruthy',
  'toBeInstanceOf',
  'toThrow',
  'toBeUndefined',
  'toBeNull',
])
const SOURCE = /\.(?:ts|tsx|mts|cts|js|mjs|cjs)$/

/** Every file under `dir` whose name `keep` accepts, node_modules and build output aside. */
function walk(dir, keep) {
  return readdirSync(dir).flatMap((name) => {
    if (name === 'node_modules' || name === 'dist' || name === '.tmp') return []
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return walk(path, keep)
    return keep(path) ? [path] : []
  })
}

/** The test sources: everything under test/, and the `*.test.*` files beside the packages' code. */
function testSources() {
  const isTest = (path) => /\.test\.[cm]?[jt]sx?$/.test(path)
  return [
    ...walk(join(root, 'test'), (path) => SOURCE.test(path)),
    ...walk(join(root, 'packages'), isTest),
    ...walk(join(root, 'examples'), isTest),
  ]
}

/** The name a call's callee ends in: `expect` for `expect(x)`, `unreachable` for `expect.unreachable()`. */
function calleeName(call) {
  const callee = call.expression
  if (ts.isIdentifier(callee)) return callee.text
  if (ts.isPropertyAccessExpression(callee)) return callee.name.text
  return undefined
}

function isUnreachableCall(node) {
  return (
    ts.isCallExpression(node) &&
    ts.isPropertyAccessExpression(node.expression) &&
    ts.isIdentifier(node.expression.expression) &&
    node.expression.expression.text === 'expect' &&
    ['unreachable', 'fail'].includes(node.expression.name.text)
  )
}

function contains(node, test) {
  let found = false
  const visit = (child) => {
    if (found) return
    if (test(child)) found = true
    else ts.forEachChild(child, visit)
  }
  visit(node)
  return found
}

/** The matcher at the end of `expect(...)[.not|.resolves...].matcher(...)`, given the `expect(...)` call. */
function matcherOf(expectCall) {
  let node = expectCall
  while (ts.isPropertyAccessExpression(node.parent) && node.parent.expression === node) {
    node = node.parent
    if (ts.isCallExpression(node.parent) && node.parent.expression === node) return node.name.text
  }
  return undefined
}

/** Does the catch block hold `expect(<something naming the caught error>).<a matcher that can tell>`? */
function assertsOnCaught(clause) {
  const binding = clause.variableDeclaration?.name
  if (binding === undefined || !ts.isIdentifier(binding)) return false
  const names = (node) => contains(node, (n) => ts.isIdentifier(n) && n.text === binding.text)
  return contains(
    clause.block,
    (node) =>
      ts.isCallExpression(node) &&
      calleeName(node) === 'expect' &&
      ts.isIdentifier(node.expression) &&
      node.arguments.length > 0 &&
      names(node.arguments[0]) &&
      !WEAK.has(matcherOf(node) ?? ''),
  )
}

/** The findings in one file's text: `path:line what`. */
function findings(path, text) {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true)
  const where = (node) =>
    `${relative(root, path) || path}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`
  const found = []
  const visit = (node) => {
    if (ts.isPropertyAccessExpression(node) && SKIPPING.has(node.name.text)) {
      found.push(
        `${where(node)} .${node.name.text}: every test runs, always (no skip, only, todo, skipIf, runIf)`,
      )
    } else if (
      ts.isIdentifier(node) &&
      (node.text === 'skipIf' || node.text === 'runIf') &&
      !ts.isPropertyAccessExpression(node.parent)
    ) {
      found.push(
        `${where(node)} ${node.text}: every test runs, always (no skip, only, todo, skipIf, runIf)`,
      )
    }
    if (ts.isTryStatement(node) && node.catchClause && contains(node.tryBlock, isUnreachableCall)) {
      if (!assertsOnCaught(node.catchClause)) {
        found.push(
          `${where(node)} try { expect.unreachable() } catch: the catch must assert on the error it caught (expect(error)... with a matcher the unreachable error fails), or use await expect(promise).rejects`,
        )
      }
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

const given = process.argv.slice(2)
const files = given.length > 0 ? given : testSources()
const all = files.flatMap((file) => findings(file, readFileSync(file, 'utf8')))
if (given.length === 0 && files.length < 100) {
  all.push(
    `check-tests: found only ${files.length} test files; is the layout what this script expects?`,
  )
}
for (const line of all) console.error(line)
if (all.length > 0) process.exit(1)
console.log(
  `check-tests: ${files.length} files, every test runs and every caught error is asserted on`,
)

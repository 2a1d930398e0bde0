import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { STACKS, type Stack, stackById } from './stacks.js'
import { STORES, type StoreKind, storeById } from './stores.js'

/** What `init` found in an app's folder: data, printed by the CLI. */
export interface AppFacts {
  dir: string
  name: string
  stack: Stack
  /** How the stack was chosen: found from these dependencies or files, or given by --framework. */
  stackBecause: string
  store: StoreKind
  storeBecause: string
  /** `npm`, `pnpm`, `yarn` or `bun`, from the lockfile (npm when there is none). */
  packageManager: 'npm' | 'pnpm' | 'yarn' | 'bun'
  typescript: boolean
  /** `"type": "module"` in package.json. */
  esm: boolean
  /** `src/` when the app keeps its code there, else empty. */
  src: string
  /** Prisma's `datasource db { provider }`, when the app has a Prisma schema. */
  prismaProvider: string | undefined
  /** Prisma's schema file and its generator's output, when the app has one. */
  prismaSchema: { file: string; output: string | undefined } | undefined
  /** Every dependency, for the plan's checks. */
  dependencies: Record<string, string>
  /** package.json's scripts: the start command shown is one of them. */
  scripts: Record<string, string>
}

/** Why `init` cannot go on: one line, and the usual cause. */
export class InitError extends Error {
  override readonly name = 'InitError'
  constructor(
    message: string,
    readonly hint: string,
  ) {
    super(message)
  }
}

const LOCKFILES = [
  ['pnpm-lock.yaml', 'pnpm'],
  ['yarn.lock', 'yarn'],
  ['bun.lock', 'bun'],
  ['bun.lockb', 'bun'],
  ['package-lock.json', 'npm'],
] as const

/** `{src/,}app`: any of the alternatives exists. */
const fileExists = (dir: string, pattern: string): boolean => {
  const options = /^\{([^}]*)\}(.*)$/.exec(pattern)
  if (options === null) return existsSync(join(dir, pattern))
  const [, alternatives = '', rest = ''] = options
  return alternatives.split(',').some((prefix) => existsSync(join(dir, `${prefix}${rest}`)))
}

function readManifest(dir: string): {
  name?: string
  type?: string
  dependencies?: Record<string, string>
  devDependencies?: Record<string, string>
  scripts?: Record<string, string>
} {
  const file = join(dir, 'package.json')
  if (!existsSync(file)) {
    throw new InitError(
      `init: no package.json in ${dir}`,
      'run init in the folder of your app (where its package.json is), or pass --dir',
    )
  }
  try {
    return JSON.parse(readFileSync(file, 'utf8'))
  } catch (error) {
    throw new InitError(
      `init: ${file} is not valid JSON (${(error as Error).message})`,
      'fix package.json first: npm cannot read it either',
    )
  }
}

function findStack(dir: string, deps: Record<string, string>, forced: string | undefined) {
  if (forced !== undefined) {
    const stack = stackById(forced)
    if (stack === undefined) {
      throw new InitError(
        `init: --framework ${forced} is not one init knows`,
        `use one of: ${STACKS.map((s) => s.id).join(', ')}`,
      )
    }
    return { stack, because: 'given by --framework' }
  }
  const found = [...STACKS]
    .sort((a, b) => a.priority - b.priority)
    .find(
      (stack) =>
        (stack.dependencies.length === 0 || stack.dependencies.some((name) => name in deps)) &&
        (stack.files ?? []).every((pattern) => fileExists(dir, pattern)),
    ) as Stack
  const named = found.dependencies.filter((name) => name in deps)
  const because =
    named.length === 0
      ? 'no framework in package.json: a plain node:http server'
      : `${named.join(', ')} in package.json${found.files ? `, ${found.files.join(', ')}` : ''}`
  return { stack: found, because }
}

function findStore(deps: Record<string, string>, forced: string | undefined) {
  if (forced !== undefined) {
    const store = storeById(forced)
    if (store === undefined) {
      throw new InitError(
        `init: --store ${forced} is not one init knows`,
        `use one of: ${STORES.map((s) => s.id).join(', ')}`,
      )
    }
    return { store, because: 'given by --store' }
  }
  // None found: the memory store, the last row, which no dependency points at.
  const store = (STORES.find((kind) => kind.dependencies.some((name) => name in deps)) ??
    STORES.at(-1)) as StoreKind
  const named = store.dependencies.filter((name) => name in deps)
  return {
    store,
    because:
      named.length === 0
        ? 'no database client in package.json; pass --store for another'
        : `${named.join(', ')} in package.json`,
  }
}

/** The app's Prisma schema, its provider and its client's output, when there is one. */
function findPrisma(dir: string) {
  for (const file of ['prisma/schema.prisma', 'schema.prisma']) {
    const path = join(dir, file)
    if (!existsSync(path)) continue
    const text = readFileSync(path, 'utf8')
    const provider = /datasource\s+\w+\s*\{[^}]*provider\s*=\s*"(\w+)"/.exec(text)?.[1]
    const output = /generator\s+\w+\s*\{[^}]*output\s*=\s*"([^"]+)"/.exec(text)?.[1]
    return { provider, schema: { file, output } }
  }
  return { provider: undefined, schema: undefined }
}

/** Reads the app in `dir`: its stack, store, package manager, language and layout. */
export function detectApp(
  dir: string,
  options: { framework?: string | undefined; store?: string | undefined } = {},
): AppFacts {
  const manifest = readManifest(dir)
  const dependencies = { ...manifest.devDependencies, ...manifest.dependencies }
  const { stack, because: stackBecause } = findStack(dir, dependencies, options.framework)
  const { store, because: storeBecause } = findStore(dependencies, options.store)
  const prisma = findPrisma(dir)
  const packageManager = LOCKFILES.find(([file]) => existsSync(join(dir, file)))?.[1] ?? 'npm'
  return {
    dir,
    name: manifest.name ?? 'app',
    stack,
    stackBecause,
    store,
    storeBecause,
    packageManager,
    typescript: existsSync(join(dir, 'tsconfig.json')) || 'typescript' in dependencies,
    esm: manifest.type === 'module',
    src: existsSync(join(dir, 'src')) ? 'src/' : '',
    prismaProvider: prisma.provider,
    prismaSchema: prisma.schema,
    dependencies,
    scripts: { ...manifest.scripts },
  }
}

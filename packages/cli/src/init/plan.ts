import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, posix, relative } from 'node:path'
import type { AppFacts } from './detect.js'
import { unifiedDiff } from './diff.js'
import { editAppFile, editable } from './edit.js'
import { envScriptEdits, type ScriptEdit, startScript } from './env-scripts.js'
import { HANDLERS, type RouteContext } from './stacks.js'
import type { StoreContext } from './stores.js'

/** A file `init` writes: new, the same as what is there, or different from what is there. */
export interface PlannedFile {
  path: string
  text: string
  /** `create`: not there; `same`: there with this text; `differs`: there with other text (needs --force). */
  state: 'create' | 'same' | 'differs'
}

/** A file `init` adds lines to (never removing or changing a line). */
export interface PlannedAppend {
  path: string
  lines: string[]
  why: string
}

/** The app's own file as `init` would edit it: written only if it still reads `before`. */
export interface PlannedEdit {
  path: string
  before: string
  text: string
  /** Where the mount goes, in words. */
  where: string
  /** The change as a unified diff, line by line. */
  diff: string[]
}

/** A script of the app's package.json `init` adds (`before` undefined) or changes, and why. */
export interface PlannedScript extends Omit<ScriptEdit, 'before'> {
  before: string | undefined
  why: string
}

/** Everything `init` would do, as data: the CLI prints it, asks, then applies it. */
export interface InitPlan {
  facts: AppFacts
  path: string
  secretEnv: string
  files: PlannedFile[]
  appends: PlannedAppend[]
  /** Packages the app does not have yet, and the command that installs them. */
  install: { packages: string[]; command: string[] }
  /**
   * The lines a stack mounted in the app's own file needs, where they go, and
   * whether they are there; `refused` says why `init` does not edit the file
   * itself (then they are printed for the user to add).
   */
  mount:
    | {
        file: string | undefined
        where: string
        lines: string[]
        mounted: boolean
        refused?: string
      }
    | undefined
  /** The edit of the app's own file, when `init` makes it (see `withEdit`). */
  edit?: PlannedEdit
  /** Scripts of package.json `init` adds or changes: `.env` loaded by the start scripts, the table's setup. */
  scripts: PlannedScript[]
  /**
   * The script that creates the app's table once, before any delivery, when
   * the store writes one (the next commands run it before the app starts).
   */
  setup: string | undefined
  notes: string[]
  /** Nothing to write, append or install: the app is set up already. */
  upToDate: boolean
  next: string[]
}

export interface PlanOptions {
  path?: string | undefined
  secretEnv?: string | undefined
  port?: number | undefined
}

const PRISMA_MODEL = `
/// Written by affiliate-webhooks' onConversion through ctx.tx: one row per conversion, at its newest status.
model AffiliateConversion {
  conversionId BigInt   @id @map("conversion_id")
  status       String
  commission   Decimal? @db.Decimal(12, 2)
  currency     String?
  eventId      String   @map("event_id")

  @@map("affiliate_conversions")
}
`

/** How every command shown to the app's user runs this project's CLI: by its scoped name, never a bare one. */
export const CLI_COMMAND = 'npx @affiliate-webhooks/cli'

/** The script that creates the app's table, and the file it runs. */
export const SETUP_SCRIPT = 'affiliate-webhooks:setup'
export const SETUP_FILE = 'affiliate-webhooks-setup.mjs'

const ADD = {
  npm: ['npm', 'install'],
  pnpm: ['pnpm', 'add'],
  yarn: ['yarn', 'add'],
  bun: ['bun', 'add'],
}

/** `./lib/affiliate-webhooks` from `app/api/hooks/route.ts` to `lib/affiliate-webhooks.ts`. */
function importPath(from: string, to: string, extension: boolean): string {
  let path = relative(dirname(from), to).split('\\').join('/')
  if (!path.startsWith('.')) path = `./${path}`
  return extension ? path.replace(/\.ts$/, '.js') : path.replace(/\.(ts|js|mjs)$/, '')
}

function moduleFile(facts: AppFacts): string {
  const { stack, src } = facts
  const dir = stack.moduleDir.startsWith('../')
    ? stack.moduleDir.slice(3)
    : `${stack.routeFile ? src || (stack.id === 'react-router' ? 'app/' : '') : src}${stack.moduleDir}`
  const extension = facts.typescript ? 'ts' : facts.esm ? 'js' : 'mjs'
  return posix.join(dir || '.', `affiliate-webhooks.${extension}`)
}

/** What the Prisma store needs: the client's import and the adapter of the schema's provider. */
function prismaParts(facts: AppFacts, module: string) {
  const mysql = facts.prismaProvider === 'mysql'
  const output = facts.prismaSchema?.output
  const clientImport =
    output === undefined
      ? '@prisma/client'
      : importPath(
          module,
          join(dirname(facts.prismaSchema?.file ?? ''), output, 'client.ts'),
          false,
        )
  return {
    clientImport,
    adapter: mysql ? '@prisma/adapter-mariadb' : '@prisma/adapter-pg',
    store: mysql ? '@affiliate-webhooks/mysql' : '@affiliate-webhooks/postgres',
  }
}

/** The shared module: the store made once per process, the typed onConversion, the handler. */
function moduleText(facts: AppFacts, route: RouteContext, module: string): string {
  const { store, typescript } = facts
  const storeContext: StoreContext = {
    typescript,
    ...(store.id === 'prisma'
      ? { prismaClientImport: prismaParts(facts, module).clientImport }
      : {}),
  }
  const made = store.make(storeContext)
  if (store.id === 'prisma' && facts.prismaProvider === 'mysql') {
    made.imports = made.imports.map((line) =>
      line.includes('@prisma/adapter-pg')
        ? "import { PrismaMariaDb } from '@prisma/adapter-mariadb'"
        : line,
    )
    made.code = made.code.replace(
      "new PrismaPg({ connectionString: required('DATABASE_URL') })",
      "new PrismaMariaDb(required('DATABASE_URL'))",
    )
  }
  const handler = HANDLERS[facts.stack.handler](route)
  const ctx = store.sql ? 'ctx' : '_ctx'
  const signature = typescript
    ? `(conversion: Conversion, event: ConversionEvent, ${ctx}: HandlerContext<Tx>): Promise<void>`
    : `(conversion, event, ${ctx})`
  return [
    '// Written by `affiliate-webhooks init`: yours to change.',
    ...(typescript
      ? [
          "import type { Conversion, ConversionEvent, EventStore, HandlerContext } from '@affiliate-webhooks/core'",
        ]
      : []),
    ...made.imports,
    ...(handler ? [handler.import] : []),
    ...(needsRequired(store) && facts.stack.building?.import ? [facts.stack.building.import] : []),
    '',
    ...(needsRequired(store)
      ? [requiredText(typescript, facts.stack.building?.expression), '']
      : []),
    '// Made once per process: a dev server that reloads this module reuses it.',
    made.code,
    ...(typescript ? ['', 'type Tx = typeof store extends EventStore<infer T> ? T : never'] : []),
    '',
    store.sql
      ? "/** Once per event, never an older status after a newer one; ctx.tx commits with the store's mark. */"
      : '/** Once per event, never an older status after a newer one of the same conversion. */',
    `export async function onConversion${signature} {`,
    store.write,
    '}',
    ...(handler ? ['', handler.code] : []),
    '',
  ].join('\n')
}

/** The store connects with a variable that has no default: the module checks it before using it. */
const needsRequired = (store: AppFacts['store']) =>
  store.urlEnv !== undefined && store.urlDefault === undefined

/**
 * `required(name)`: the variable's value, or one line that names it instead of
 * the driver's `Invalid URL ''` or a 503 at the first delivery. While the
 * stack's build imports the module (Next.js, SvelteKit), a variable not set is
 * not an error yet.
 */
function requiredText(typescript: boolean, building: string | undefined): string {
  return [
    '/** A variable the store connects with: missing or empty, one line names it (never its value). */',
    `function required(name${typescript ? ': string' : ''})${typescript ? ': string' : ''} {`,
    '  const value = process.env[name]',
    building ? `  if (value || ${building}) return value ?? ''` : '  if (value) return value',
    `  throw new Error(\`\${name} is not set: put it in .env (\${name}=...) or in the app's environment, then start the app again\`)`,
    '}',
  ].join('\n')
}

/**
 * The setup script: the app's table made once, with the app's own driver,
 * before any delivery. A variable not set, or a database that refuses, is one
 * line and exit code 1 (never the URL: drivers' messages name host and user).
 */
function setupText(store: AppFacts['store']): string {
  const setup = store.setup as NonNullable<AppFacts['store']['setup']>
  const urlEnv = needsRequired(store) ? store.urlEnv : undefined
  return [
    '// Written by `affiliate-webhooks init`: creates the table onConversion writes, once,',
    '// before any delivery (never inside one). Safe to run again; or move the statement',
    '// into your migrations.',
    setup.import,
    '',
    `const TABLE =\n  '${store.table}'`,
    '',
    ...(urlEnv
      ? [
          `const url = process.env.${urlEnv}`,
          'if (!url) {',
          `  console.error("${urlEnv} is not set: put it in .env (${urlEnv}=...) or in the environment, then run this again")`,
          '  process.exit(1)',
          '}',
        ]
      : []),
    'let db',
    'try {',
    `  db = ${setup.open}`,
    `  await db.${setup.run}`,
    "  console.log('affiliate_conversions: ready')",
    '} catch (error) {',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the placeholder belongs to the code init writes.
    '  console.error(`affiliate_conversions not created: ${error.message}`)',
    '  process.exitCode = 1',
    '} finally {',
    `  await db?.${setup.close}`,
    '}',
    '',
  ].join('\n')
}

function planned(dir: string, path: string, text: string): PlannedFile {
  const file = join(dir, path)
  if (!existsSync(file)) return { path, text, state: 'create' }
  return { path, text, state: readFileSync(file, 'utf8') === text ? 'same' : 'differs' }
}

/** Lines to add to `.env` (never a variable already there) and `.gitignore`. */
function envAppends(facts: AppFacts, secretEnv: string): PlannedAppend[] {
  const read = (path: string) =>
    existsSync(join(facts.dir, path)) ? readFileSync(join(facts.dir, path), 'utf8') : ''
  const env = read('.env')
  const set = new Set(
    env.split('\n').map((line) => /^\s*(?:export\s+)?([A-Za-z_]\w*)\s*=/.exec(line)?.[1]),
  )
  const wanted = [secretEnv, ...(facts.store.urlEnv ? [facts.store.urlEnv] : [])].filter(
    (name) => !set.has(name),
  )
  const appends: PlannedAppend[] = []
  if (wanted.length > 0) {
    appends.push({
      path: '.env',
      lines: wanted.map(
        (name) => `${name}=${name === facts.store.urlEnv ? (facts.store.urlDefault ?? '') : ''}`,
      ),
      why: `${wanted.join(' and ')} for the receiver (a value already set is never changed)`,
    })
  }
  const ignored = read('.gitignore')
    .split('\n')
    .some((line) => /^\/?\.env(\*|\.?\*)?$/.test(line.trim()))
  if (!ignored)
    appends.push({ path: '.gitignore', lines: ['.env'], why: 'the secret stays out of git' })
  return appends
}

/** What `init` would do in the app `facts` describes; reads files, writes none. */
export function planInit(facts: AppFacts, options: PlanOptions = {}): InitPlan {
  const { stack, store, dir } = facts
  const path = options.path ?? stack.defaultPath ?? '/hooks'
  const secretEnv = options.secretEnv ?? 'AFFILIATE_WEBHOOK_SECRET'
  const module = moduleFile(facts)
  const routePath = stack.routeFile?.at(path, facts.src)
  const routeAt =
    routePath && !facts.typescript
      ? routePath.replace(/\.ts$/, facts.esm ? '.js' : '.mjs')
      : routePath
  const context = (from: string, extension: boolean): RouteContext => ({
    path,
    secretEnv,
    typescript: facts.typescript,
    moduleImport: importPath(from, module, extension),
  })
  const files = [planned(dir, module, moduleText(facts, context(module, false), module))]
  if (stack.routeFile && routeAt)
    files.push(
      planned(
        dir,
        routeAt,
        stack.routeFile.text(context(routeAt, stack.routeImportsFile === true)),
      ),
    )
  if (store.setup && store.table) files.push(planned(dir, SETUP_FILE, setupText(store)))
  const appends = envAppends(facts, secretEnv)
  const notes = [`the body: ${stack.bodyMistake}`]
  if (stack.routeNote) notes.push(stack.routeNote(path))
  const packages = new Set([stack.adapter, '@affiliate-webhooks/core', ...store.packages])
  if (store.id === 'prisma') {
    const prisma = prismaParts(facts, module)
    packages.add(prisma.store).add(prisma.adapter)
    const schema = facts.prismaSchema?.file
    if (schema && !readFileSync(join(dir, schema), 'utf8').includes('model AffiliateConversion')) {
      appends.push({
        path: schema,
        lines: PRISMA_MODEL.split('\n'),
        why: 'the table onConversion writes, in your Prisma schema',
      })
    }
    notes.push(
      "tables: AffiliateConversion is in your Prisma schema; create it with your migrations (npx prisma migrate dev, before the store's own aw_* tables exist; afterwards prisma migrate deploy, as migrate dev sees tables it does not know as drift). The store creates its aw_* tables itself on first use.",
    )
  } else if (store.setup) {
    notes.push(
      `tables: affiliate_conversions, the table onConversion writes, is created once before any delivery, never in one: ${run(facts, SETUP_SCRIPT)} (${SETUP_FILE}, with your ${store.name} driver and ${store.urlEnv} from .env; safe to run again), or put its statement in your migrations. The store creates its own aw_* tables on first use.`,
    )
  }
  const scripts: PlannedScript[] = []
  if (store.setup && facts.scripts[SETUP_SCRIPT] === undefined) {
    scripts.push({
      script: SETUP_SCRIPT,
      before: undefined,
      after: `node --env-file-if-exists=.env ${SETUP_FILE}`,
      why: 'creates affiliate_conversions once, before any delivery',
    })
  }
  const loading = envScriptEdits(facts.scripts, stack.env)
  for (const edit of loading.edits)
    scripts.push({ ...edit, why: `${stack.name} does not read .env: this loads it` })
  notes.push(envNote(facts, loading))
  if (!store.sql) notes.push(`store: ${facts.storeBecause}`)
  const missing = [...packages].filter((name) => !(name in facts.dependencies))
  const mountFile = stack.mount?.appFiles.find((file) => existsSync(join(dir, file)))
  const mountContext = context(mountFile ?? 'app.js', !facts.typescript || facts.esm)
  const mount = stack.mount && {
    file: mountFile,
    where: stack.mount.where,
    lines: stack.mount.lines(mountContext),
    mounted:
      mountFile !== undefined &&
      readFileSync(join(dir, mountFile), 'utf8').includes(`'${mountContext.moduleImport}'`),
  }
  const port = options.port ?? stack.devPort ?? 3000
  const start = startScript(facts.scripts, stack.startScripts)
  return {
    facts,
    path,
    secretEnv,
    files,
    appends,
    install: { packages: missing, command: [...ADD[facts.packageManager], ...missing] },
    mount,
    scripts,
    setup: store.setup ? SETUP_SCRIPT : undefined,
    notes,
    upToDate:
      files.every((file) => file.state === 'same') &&
      appends.length === 0 &&
      missing.length === 0 &&
      scripts.length === 0 &&
      (mount === undefined || mount.mounted),
    next: nextCommands(facts, { start, port, path, secretEnv }),
  }
}

/** The commands to run after init, in order: the app's own scripts, then this project's CLI. */
function nextCommands(
  facts: AppFacts,
  at: { start: string | undefined; port: number; path: string; secretEnv: string },
): string[] {
  const { stack, store } = facts
  return [
    ...(store.setup
      ? [
          `${run(facts, SETUP_SCRIPT)}   # once, after ${store.urlEnv ?? 'the database'} is set in .env: creates affiliate_conversions before any delivery`,
        ]
      : []),
    at.start === undefined
      ? `# start your app with .env loaded: package.json has no ${(stack.startScripts ?? ['dev', 'start']).join(' or ')} script`
      : run(facts, at.start),
    `${CLI_COMMAND} emulator --time-scale 60   # a minute of service time per second, so the delivery batch comes at once; its banner prints AFFILIATE_API_URL and AFFILIATE_API_KEY: export them in a second terminal`,
    `${CLI_COMMAND} endpoints create --url http://localhost:${at.port}${at.path} --show-secret   # put the secret in .env as ${at.secretEnv}, restart the app`,
    `${CLI_COMMAND} trigger conversion.created --commission 4.20 --currency EUR --wait`,
  ]
}

/** `npm run dev`, `pnpm dev`, `yarn dev`, `bun run dev`: one of the app's scripts, with its package manager. */
function run(facts: AppFacts, script: string): string {
  const pm = facts.packageManager
  return pm === 'npm' || pm === 'bun' ? `${pm} run ${script}` : `${pm} ${script}`
}

/** Who loads .env, and what init changes or leaves for that. */
function envNote(facts: AppFacts, loading: ReturnType<typeof envScriptEdits>): string {
  const { stack } = facts
  if (stack.env === 'stack') return `.env: ${stack.name} reads it itself`
  const how =
    stack.env === 'nest'
      ? 'nest start --env-file .env, node --env-file-if-exists=.env'
      : 'node --env-file-if-exists=.env'
  const edited = loading.edits.map((edit) => edit.script)
  const loaded = Object.entries(facts.scripts)
    .filter(([, command]) => /--env-file(-if-exists)?\b/.test(command))
    .map(([name]) => name)
  const parts = [`.env: ${stack.name} does not read it`]
  if (edited.length > 0) parts.push(`init makes the scripts ${edited.join(', ')} load it (${how})`)
  if (loaded.length > 0 && edited.length === 0)
    parts.push(`the scripts ${loaded.join(', ')} load it`)
  if (loading.unknown.length > 0)
    parts.push(
      `the scripts ${loading.unknown.join(', ')} run no command init knows: load it there yourself (${how})`,
    )
  if (edited.length === 0 && loaded.length === 0 && loading.unknown.length === 0)
    parts.push(
      `no start script in package.json: start the app with ${how.split(', ').at(-1)} <file>`,
    )
  return parts.join('; ')
}

/**
 * The plan with the edit of the app's own file, for the stacks `init` edits:
 * the edit as a diff, or why the file is left alone (the lines are printed).
 * The parser is loaded then (editAppFile imports it), only when there is a file to edit.
 */
export async function withEdit(plan: InitPlan): Promise<InitPlan> {
  const { mount, facts } = plan
  if (!mount || mount.mounted) return plan
  if (!editable(facts.stack.id))
    return {
      ...plan,
      mount: { ...mount, refused: `init does not edit a ${facts.stack.name} app's file` },
    }
  if (!mount.file)
    return {
      ...plan,
      mount: {
        ...mount,
        refused: `no app file found (looked for ${facts.stack.mount?.appFiles.join(', ')})`,
      },
    }
  const before = readFileSync(join(facts.dir, mount.file), 'utf8')
  const [importLine = '', mountLine = ''] = mount.lines
  const edited = await editAppFile({
    stack: facts.stack.id,
    file: mount.file,
    source: before,
    esm: facts.esm,
    importLine,
    mountLine,
  })
  if ('refused' in edited) return { ...plan, mount: { ...mount, refused: edited.refused } }
  return {
    ...plan,
    edit: {
      path: mount.file,
      before,
      text: edited.text,
      where: edited.where,
      diff: unifiedDiff(mount.file, before, edited.text),
    },
  }
}

import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, posix, relative } from 'node:path'
import type { AppFacts } from './detect.js'
import { unifiedDiff } from './diff.js'
import { editAppFile, editable } from './edit.js'
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
      'new PrismaPg({ connectionString: process.env.DATABASE_URL })',
      "new PrismaMariaDb(process.env.DATABASE_URL ?? '')",
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
    '',
    ...(store.table && !store.tableOutside ? [`const TABLE = '${store.table}'`, ''] : []),
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
    files.push(planned(dir, routeAt, stack.routeFile.text(context(routeAt, false))))
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
  } else if (store.table) {
    notes.push(
      store.tableOutside
        ? `tables: create affiliate_conversions with your migrations (MySQL commits before DDL, so not in a delivery): ${store.table}. The store creates its aw_* tables itself on first use.`
        : "tables: onConversion creates affiliate_conversions on first use (CREATE TABLE IF NOT EXISTS, in the delivery's transaction), and the store its aw_* tables: no migration needed to start; move them to your migrations when you have some.",
    )
  }
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
  return {
    facts,
    path,
    secretEnv,
    files,
    appends,
    install: { packages: missing, command: [...ADD[facts.packageManager], ...missing] },
    mount,
    notes,
    upToDate:
      files.every((file) => file.state === 'same') &&
      appends.length === 0 &&
      missing.length === 0 &&
      (mount === undefined || mount.mounted),
    next: [
      `${facts.packageManager === 'npm' ? 'npm run' : facts.packageManager} dev`,
      'npx affiliate-webhooks emulator --time-scale 60   # a minute of service time per second, so the delivery batch comes at once; its banner prints AFFILIATE_API_URL and AFFILIATE_API_KEY: export them in a second terminal',
      `npx affiliate-webhooks endpoints create --url http://localhost:${port}${path} --show-secret   # put the secret in .env as ${secretEnv}, restart the app`,
      'npx affiliate-webhooks trigger conversion.created --commission 4.20 --currency EUR --wait',
    ],
  }
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

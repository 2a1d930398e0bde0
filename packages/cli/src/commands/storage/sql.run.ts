import type { HeldEvent, HeldResolved } from '@affiliate-webhooks/core'
import type { Handler } from '../../framework/command.js'
import { EXIT, type Io, output, UsageError } from '../../framework/io.js'
import { importOptional, MYSQL_PACKAGES, POSTGRES_PACKAGES } from '../support/optional-package.js'
import { type OpenedHolding, openHolding } from './held-store.js'
import type { sql } from './sql.js'

type SchemaText = (options: { tablePrefix?: string; schema?: string }) => string
type Values = Parameters<Handler<typeof sql.options>>[0]

/** The DDL of each SQL store, by the flag that names its database: its package imported then. */
const SCHEMAS: Record<'postgres' | 'mysql', () => Promise<SchemaText>> = {
  postgres: async () =>
    (
      await importOptional(
        () => import('@affiliate-webhooks/postgres'),
        POSTGRES_PACKAGES,
        '--postgres',
      )
    ).postgresSchema,
  mysql: async () =>
    (await importOptional(() => import('@affiliate-webhooks/mysql'), MYSQL_PACKAGES, '--mysql'))
      .mysqlSchema,
}

/** `sql schema`: the DDL of one store. */
async function schemaOf(values: Values, io: Io, extra: string[]): Promise<number> {
  if (extra.length > 0) throw new UsageError(`unexpected argument ${extra[0]}`)
  const chosen = (['postgres', 'mysql'] as const).filter((name) => values[name] === true)
  if (chosen.length !== 1) {
    throw new UsageError('name the database: --postgres or --mysql (one of them)')
  }
  const tablePrefix = values['table-prefix']
  const schema = values.schema
  if (schema !== undefined && chosen[0] !== 'postgres') {
    throw new UsageError('--schema is for --postgres; MySQL tables live in the connection database')
  }
  const print = await SCHEMAS[chosen[0] as 'postgres' | 'mysql']()
  try {
    io.stdout.write(print({ ...(tablePrefix && { tablePrefix }), ...(schema && { schema }) }))
  } catch (error) {
    // A prefix or schema name the store would refuse: said the store's way.
    throw new UsageError(
      (error as Error).message
        .replace(/^\w+: /, '')
        .replace('`tablePrefix`', '--table-prefix')
        .replace('`schema`', '--schema'),
    )
  }
  return EXIT.ok
}

/** One held event as a line. */
const heldLine = (held: HeldEvent) =>
  `  ${held.eventId}${held.conversionId === undefined ? '  (no conversion)' : `  conversion ${held.conversionId}, order ${held.order}`}`

function heldText(where: string, held: readonly HeldEvent[]): string {
  if (held.length === 0) return `no held events in ${where}\n`
  return [
    `${held.length} held event${held.length === 1 ? '' : 's'} in ${where}: a statement of the handler committed the handled mark, so the effects may be partial; every delivery is answered 500 event_held until resolved`,
    ...held.map(heldLine),
    'resolve each after checking what its handler kept:',
    '  npx @affiliate-webhooks/cli sql resolve <event id> --rerun    (the next delivery runs the handler again)',
    '  npx @affiliate-webhooks/cli sql resolve <event id> --accept   (taken as handled as it is)',
    '',
  ].join('\n')
}

const resolvedText = (resolved: HeldResolved) =>
  `resolved ${resolved.eventId} (${resolved.resolution}): ${resolved.next}\n`

/** The database named by --database or $DATABASE_URL, and the resolution named, checked. */
function holdingArgs(action: 'held' | 'resolve', values: Values, io: Io, extra: string[]) {
  const database = values.database ?? io.env.DATABASE_URL
  if (database === undefined || database === '') {
    throw new UsageError(
      `${action} needs the store's database: --database mysql://... (or a SQLite file), or DATABASE_URL set`,
    )
  }
  if (values.postgres || values.mysql || values.schema !== undefined) {
    throw new UsageError(`--postgres, --mysql and --schema are for sql schema, not sql ${action}`)
  }
  if (action === 'held') {
    if (extra.length > 0) throw new UsageError(`unexpected argument ${extra[0]}`)
    if (values.rerun || values.accept)
      throw new UsageError('--rerun and --accept are for sql resolve')
    return { database, eventId: undefined, resolution: undefined }
  }
  const [eventId, ...more] = extra
  if (eventId === undefined)
    throw new UsageError('resolve needs the event id: sql resolve evt_... --rerun|--accept')
  if (more.length > 0) throw new UsageError(`unexpected argument ${more[0]}`)
  if (values.rerun === values.accept)
    throw new UsageError('resolve takes one of --rerun or --accept')
  return { database, eventId, resolution: values.rerun ? ('rerun' as const) : ('accept' as const) }
}

/** `sql held` and `sql resolve`: on the store's own tables, through its own functions. */
async function holding(action: 'held' | 'resolve', values: Values, io: Io, extra: string[]) {
  const args = holdingArgs(action, values, io, extra)
  let opened: OpenedHolding
  try {
    opened = await openHolding(args.database, values['table-prefix'])
  } catch (error) {
    if (error instanceof UsageError) throw error
    io.stderr.write(`affiliate-webhooks sql: ${(error as Error).message}\n`)
    return EXIT.failed
  }
  try {
    const { store } = opened
    if (store === undefined) {
      const line = `no held events in ${opened.where}: PostgreSQL refuses a commit the store did not send, so postgresStore and Prisma on PostgreSQL never hold an event`
      if (args.eventId !== undefined) throw new Error(line)
      output(io, values, [], `${line}\n`)
      return EXIT.ok
    }
    if (args.eventId === undefined) {
      const held = await store.heldEvents()
      output(io, values, held, heldText(opened.where, held))
      return held.length === 0 ? EXIT.ok : EXIT.failed
    }
    const resolved = await store.resolveHeld(args.eventId, args.resolution as 'rerun' | 'accept')
    output(io, values, resolved, resolvedText(resolved))
    return EXIT.ok
  } catch (error) {
    io.stderr.write(`affiliate-webhooks sql: ${(error as Error).message}\n`)
    return EXIT.failed
  } finally {
    await opened.close().catch(() => {})
  }
}

/** Runs `sql`. */
export const run: Handler<typeof sql.options> = async (values, io, positionals = []) => {
  const [action, ...extra] = positionals
  if (action === 'schema') return schemaOf(values, io, extra)
  if (action === 'held' || action === 'resolve') return holding(action, values, io, extra)
  throw new UsageError(
    `expected the sub-command schema, held or resolve; got ${action ?? 'nothing'}`,
  )
}

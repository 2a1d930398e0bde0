import type { Handler } from '../../framework/command.js'
import { EXIT, UsageError } from '../../framework/io.js'
import { importOptional, MYSQL_PACKAGES, POSTGRES_PACKAGES } from '../support/optional-package.js'
import type { sql } from './sql.js'

type SchemaText = (options: { tablePrefix?: string; schema?: string }) => string

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

/** Runs `sql`. */
export const run: Handler<typeof sql.options> = async (values, io, positionals) => {
  const [action, ...extra] = positionals
  if (action !== 'schema') {
    throw new UsageError(`expected the sub-command schema; got ${action ?? 'nothing'}`)
  }
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

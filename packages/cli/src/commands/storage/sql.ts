import { mysqlSchema } from '@affiliate-webhooks/mysql'
import { postgresSchema } from '@affiliate-webhooks/postgres'
import { type Command, flag, str } from '../../framework/command.js'
import { EXIT, UsageError } from '../../framework/io.js'

/** The DDL of each SQL store, by the flag that names its database. */
const SCHEMAS: Record<string, (options: { tablePrefix?: string; schema?: string }) => string> = {
  postgres: postgresSchema,
  mysql: mysqlSchema,
}

export const sql: Command = {
  name: 'sql',
  summary: 'print the tables of the Postgres or MySQL store, for a migration',
  usage: ['sql schema --postgres|--mysql [--table-prefix PREFIX] [--schema NAME]'],
  about: `Prints the DDL the SQL store runs on first use: its tables, functions or
procedures and its layout version row. Run it in your migration tool (the MySQL
text uses DELIMITER lines: feed it to the mysql or mariadb client), and the
store finds the tables ready and runs no DDL itself (the app's role then needs
no CREATE). Running it twice changes nothing.`,
  options: {
    postgres: flag.bool('the DDL of @affiliate-webhooks/postgres'),
    mysql: flag.bool('the DDL of @affiliate-webhooks/mysql (MySQL 8.0.29+, MariaDB 10.5+)'),
    'table-prefix': flag.text('PREFIX', "the store's tablePrefix (default aw_)"),
    schema: flag.text('NAME', 'Postgres only: the schema holding the tables'),
  },
  footer: `Examples:
  affiliate-webhooks sql schema --postgres > migrations/0007_affiliate_webhooks.sql
  affiliate-webhooks sql schema --mysql --table-prefix hooks_

Exit codes: 0 printed, 2 wrong usage.`,
  positionals: true,
  async run(values, io, positionals) {
    const [action, ...extra] = positionals
    if (action !== 'schema') {
      throw new UsageError(`expected the sub-command schema; got ${action ?? 'nothing'}`)
    }
    if (extra.length > 0) throw new UsageError(`unexpected argument ${extra[0]}`)
    const chosen = Object.keys(SCHEMAS).filter((name) => values[name] === true)
    if (chosen.length !== 1) {
      throw new UsageError('name the database: --postgres or --mysql (one of them)')
    }
    const tablePrefix = str(values, 'table-prefix')
    const schema = str(values, 'schema')
    if (schema !== undefined && chosen[0] !== 'postgres') {
      throw new UsageError(
        '--schema is for --postgres; MySQL tables live in the connection database',
      )
    }
    const print = SCHEMAS[chosen[0] as string] as (typeof SCHEMAS)[string]
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
  },
}

import { defineCommand, flag } from '../../framework/command.js'

/** What `sql` does: its first argument. */
export const SQL_ACTIONS = ['schema', 'held', 'resolve'] as const

export const sql = defineCommand({
  actions: SQL_ACTIONS,
  usage: [
    'sql schema --postgres|--mysql [--table-prefix PREFIX] [--schema NAME]',
    'sql held [--database URL] [--table-prefix PREFIX] [--json]',
    'sql resolve <event id> --rerun|--accept [--database URL] [--table-prefix PREFIX] [--json]',
  ],
  about: `schema   prints the DDL the SQL store runs on first use: its tables, functions or
         procedures and its layout version row. Run it in your migration tool (the
         MySQL text uses DELIMITER lines: feed it to the mysql or mariadb client), and
         the store finds the tables ready and runs no DDL itself (the app's role then
         needs no CREATE). Running it twice changes nothing.
held     lists the events the store holds: a statement of the handler (a COMMIT in a
         procedure or a compound statement, SET autocommit, DDL) committed their
         handled mark, so their effects may be partial, and the store answers every
         delivery of them 500 event_held until they are resolved (MySQL, MariaDB,
         Prisma on MariaDB, SQLite; PostgreSQL refuses such a commit and holds none).
resolve  resolves one: --rerun puts its conversion's mark back, so the next delivery
         runs the handler again (what the first run kept stays: undo it first, or
         let the handler tolerate it); --accept takes it as handled as it is.`,
  options: {
    postgres: flag.bool('schema: the DDL of @affiliate-webhooks/postgres'),
    mysql: flag.bool('schema: the DDL of @affiliate-webhooks/mysql (MySQL 8.0.29+, MariaDB 10.5+)'),
    'table-prefix': flag.text('PREFIX', "the store's tablePrefix (default aw_)"),
    schema: flag.text('NAME', 'schema, Postgres only: the schema holding the tables'),
    database: flag.text(
      'URL',
      "held, resolve: the store's database: mysql://..., mariadb://... or a SQLite file; default $DATABASE_URL",
    ),
    rerun: flag.bool('resolve: the next delivery runs the handler again'),
    accept: flag.bool('resolve: the event is taken as handled as it is'),
    json: flag.bool('held, resolve: machine-readable output'),
  },
  footer: `Examples:
  affiliate-webhooks sql schema --postgres > migrations/0007_affiliate_webhooks.sql
  affiliate-webhooks sql schema --mysql --table-prefix hooks_
  affiliate-webhooks sql held --database "$DATABASE_URL"
  affiliate-webhooks sql resolve evt_01J... --rerun --database ./data/app.db

Exit codes: 0 printed, resolved, or nothing held; 1 events are held, the event is not
held, or the database is unreachable; 2 wrong usage.`,
  positionals: true,
})

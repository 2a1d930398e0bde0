import { defineCommand, flag } from '../../framework/command.js'

export const sql = defineCommand({
  actions: ['schema'],
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
})

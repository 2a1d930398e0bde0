/**
 * `affiliate-webhooks sql schema` as a migration would use it: the built CLI's
 * DDL, applied to a fresh database by its own client (psql, mariadb), makes
 * tables the store accepts without running DDL of its own; mistakes are one
 * line and exit 2.
 */
import { execFile } from 'node:child_process'
import { join } from 'node:path'

import { mysqlStore } from '@affiliate-webhooks/mysql'
import { postgresStore } from '@affiliate-webhooks/postgres'
import { describe, expect, it } from 'vitest'
import { createMysqlTestDatabase, mysqlServerOf } from '../support/mysql-db.js'
import { createPostgresTestDatabase } from '../support/postgres-db.js'
import { run } from '../support/run-process.js'

const BIN = join(new URL('../..', import.meta.url).pathname, 'packages/cli/dist/cli.js')
const cli = (args: string[]) => run(process.execPath, [BIN, ...args])

/** Feeds a text to a command's stdin, as `cmd < file.sql` would. */
async function pipe(command: string, args: string[], input: string, env?: NodeJS.ProcessEnv) {
  const child = execFile(command, args, env === undefined ? {} : { env })
  child.stdin?.end(input)
  const [code] = await new Promise<[number | null]>((resolve) =>
    child.on('close', (c) => resolve([c])),
  )
  expect(code).toBe(0)
}

describe('affiliate-webhooks sql schema', () => {
  it('--postgres prints DDL that psql applies twice, and the store then runs none of its own', async () => {
    const result = await cli(['sql', 'schema', '--postgres', '--table-prefix', 'hooks_'])
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('CREATE TABLE IF NOT EXISTS hooks_events')
    const db = await createPostgresTestDatabase()
    try {
      for (let i = 0; i < 2; i++)
        await pipe('psql', [db.url, '-v', 'ON_ERROR_STOP=1', '-q'], result.stdout)
      // A role that may not CREATE: the store must find everything ready.
      await db.pool.query('CREATE ROLE aw_app_role_test LOGIN').catch(() => {})
      await db.pool.query(
        'GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO aw_app_role_test',
      )
      await db.pool.query('REVOKE CREATE ON SCHEMA public FROM PUBLIC')
      const store = postgresStore({ pool: db.pool, tablePrefix: 'hooks_', logger: false })
      await store.ready()
      const begun = await store.begin({ eventId: 'evt_cli_schema', order: 1 })
      expect(begun.status).toBe('claimed')
      if (begun.status === 'claimed') expect(await store.commit(begun.claim)).toBe(true)
    } finally {
      await db.drop()
      await db.pool.end().catch(() => {})
    }
  })

  it('--mysql prints DDL that the mariadb client applies twice, and the store accepts', async () => {
    const result = await cli(['sql', 'schema', '--mysql'])
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('aw_events')
    const db = await createMysqlTestDatabase()
    try {
      const { host, port, user, password } = mysqlServerOf()
      const args = ['-h', host, '-P', String(port), '-u', user, db.database]
      // The client reads a password from the environment, so it never shows in a process list.
      const env = password === undefined ? undefined : { ...process.env, MYSQL_PWD: password }
      for (let i = 0; i < 2; i++) await pipe('mariadb', args, result.stdout, env)
      // The client keeps the claim's MariaDB-only block (a /*M! comment), which a
      // client that strips comments would drop without a word.
      const [routines] = await db.pool.query(
        "SELECT routine_definition AS body FROM information_schema.routines WHERE routine_schema = DATABASE() AND routine_name = 'aw_claim_v3'",
      )
      expect((routines as { body: string }[])[0]?.body).toContain(
        'innodb_lock_wait_timeout = 0 FOR',
      )
      const store = mysqlStore({ pool: db.pool, logger: false })
      await store.ready()
      const begun = await store.begin({ eventId: 'evt_cli_schema', order: 1 })
      expect(begun.status).toBe('claimed')
      if (begun.status === 'claimed') expect(await store.commit(begun.claim)).toBe(true)
    } finally {
      await db.drop()
    }
  })

  it.each([
    [['sql', 'schema'], /name the database: --postgres or --mysql/],
    [['sql', 'schema', '--postgres', '--mysql'], /name the database/],
    [
      ['sql', 'tables', '--postgres'],
      /expected the sub-command schema, held or resolve; got tables/,
    ],
    [
      ['sql', 'schema', '--postgres', '--table-prefix', 'Bad-Prefix'],
      /--table-prefix must be lower-case/,
    ],
    [['sql', 'schema', '--mysql', '--schema', 'x'], /--schema is for --postgres/],
  ])('%j is one clear line and exit 2', async (args, message) => {
    const result = await cli(args)
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    const lines = result.stderr.trim().split('\n')
    expect(lines[0]).toMatch(message)
    expect(lines[1]).toMatch(/sql --help/)
  })
})

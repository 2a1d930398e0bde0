/**
 * `affiliate-webhooks sql held` and `sql resolve` on the store's own
 * database: an event whose handled mark a statement of its handler committed
 * (a procedure on MariaDB, a COMMIT on the outer handle on SQLite) is listed,
 * answered 500 event_held until resolved, and resolved by the command; mistakes
 * are one line and exit 2.
 */
import { join } from 'node:path'
import { createReceiver, type EventStore } from '@affiliate-webhooks/core'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import { mysqlStore } from '@affiliate-webhooks/mysql'
import { sqliteStore } from '@affiliate-webhooks/sqlite'
import type { PoolConnection } from 'mysql2/promise'
import { describe, expect, it } from 'vitest'
import { createSqliteTestFile, openSqlite } from '../sql/sqlite-db.js'
import { createMysqlTestDatabase } from '../support/mysql-db.js'
import { run } from '../support/run-process.js'

const BIN = join(new URL('../..', import.meta.url).pathname, 'packages/cli/dist/cli.js')
const cli = (args: string[], env: Record<string, string | undefined> = {}) =>
  run(process.execPath, [BIN, ...args], { env: { DATABASE_URL: undefined, ...env } })

const SECRET = 'whsec_cli_sql_held'

async function delivery(event: object, attempt = 1) {
  const signed = await signedDelivery({ secret: SECRET, event, attempt })
  return { headers: signed.headers, rawBody: new TextEncoder().encode(signed.body) }
}

/** A receiver whose handler's first attempt commits the mark itself (`commitsItself`), then fails. */
function escapingReceiver(
  store: EventStore<unknown>,
  commitsItself: (tx: unknown) => Promise<unknown>,
) {
  let attempt = 0
  return createReceiver({
    secret: SECRET,
    logger: false,
    store,
    async onConversion(_conversion, _event, ctx) {
      attempt++
      if (attempt === 1) {
        await commitsItself(ctx.tx)
        throw new Error('failed after its own commit')
      }
    },
  })
}

/** Holds one event, lists and resolves it through the CLI at `database`, then delivers it again. */
async function heldThenResolved(
  database: string,
  receiver: ReturnType<typeof createReceiver>,
  where: RegExp,
) {
  const event = buildConversionEvent()
  expect((await receiver.receive(await delivery(event))).status).toBe(500)
  const held = await receiver.receive(await delivery(event, 2))
  expect(held.error?.code).toBe('event_held')
  const listed = await cli(['sql', 'held', '--database', database])
  expect(listed.code, listed.stderr).toBe(1)
  expect(listed.stdout).toMatch(where)
  expect(listed.stdout).toContain(event.id)
  expect(listed.stdout).not.toMatch(/password|secret/i)
  const json = await cli(['sql', 'held', '--json'], { DATABASE_URL: database })
  expect(JSON.parse(json.stdout)).toContainEqual(expect.objectContaining({ eventId: event.id }))
  const resolved = await cli(['sql', 'resolve', event.id, '--rerun', '--database', database])
  expect(resolved.code, resolved.stderr).toBe(0)
  expect(resolved.stdout).toMatch(
    new RegExp(`resolved ${event.id} \\(rerun\\): .*handler runs again`),
  )
  const again = await cli(['sql', 'resolve', event.id, '--accept', '--database', database])
  expect(again.code).toBe(1)
  expect(again.stderr.trim().split('\n')).toHaveLength(1)
  expect(again.stderr).toMatch(/is not held/)
  expect((await receiver.receive(await delivery(event, 3))).outcome).toBe('processed')
  const none = await cli(['sql', 'held', '--database', database])
  expect([none.code, none.stdout]).toEqual([0, expect.stringMatching(/^no held events in /)])
}

describe('affiliate-webhooks sql held / resolve', () => {
  it('on MariaDB: an event a procedure of the handler committed is listed, resolved with --rerun, and processed after', async () => {
    const db = await createMysqlTestDatabase()
    try {
      await db.pool.query('CREATE PROCEDURE app_flush() BEGIN COMMIT; END')
      const store = mysqlStore({ pool: db.pool, logger: false })
      const receiver = escapingReceiver(store as EventStore<unknown>, (tx) =>
        (tx as PoolConnection).query('CALL app_flush()'),
      )
      await heldThenResolved(db.url, receiver, /^1 held event in mysql:\/\/127\.0\.0\.1:3306\//)
    } finally {
      await db.drop()
    }
  })

  it('on a SQLite file: an event committed on the outer handle is listed, resolved with --rerun, and processed after', async () => {
    const file = createSqliteTestFile()
    const database = openSqlite('node:sqlite', file.file)
    try {
      const store = sqliteStore({ database })
      const receiver = escapingReceiver(store as EventStore<unknown>, async () =>
        database.exec('COMMIT; BEGIN'),
      )
      await heldThenResolved(file.file, receiver, /^1 held event in SQLite file /)
    } finally {
      database.close()
      file.drop()
    }
  })

  it('on PostgreSQL says no event is ever held there, and why', async () => {
    const result = await cli(['sql', 'held', '--database', 'postgres://app:pw@127.0.0.1:5432/app'])
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(
      /no held events in postgres:\/\/127\.0\.0\.1:5432\/app: PostgreSQL refuses/,
    )
    expect(result.stdout).not.toContain('pw')
  })

  it.each([
    [['sql', 'held'], /held needs the store's database: --database/],
    [['sql', 'resolve', '--rerun', '--database', 'x.db'], /resolve needs the event id/],
    [['sql', 'resolve', 'evt_1', '--database', 'x.db'], /one of --rerun or --accept/],
    [
      ['sql', 'resolve', 'evt_1', '--rerun', '--accept', '--database', 'x.db'],
      /one of --rerun or --accept/,
    ],
    [['sql', 'held', '--rerun', '--database', 'x.db'], /--rerun and --accept are for sql resolve/],
    [
      ['sql', 'held', '--database', 'redis://127.0.0.1'],
      /a mysql:\/\/, mariadb:\/\/ or postgres:\/\/ URL, or a SQLite file/,
    ],
  ])('%j is one clear line and exit 2', async (args, message) => {
    const result = await cli(args)
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    const lines = result.stderr.trim().split('\n')
    expect(lines[0]).toMatch(message)
    expect(lines[1]).toMatch(/sql --help/)
  })
})

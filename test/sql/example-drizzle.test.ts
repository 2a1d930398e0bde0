/**
 * examples/postgres-drizzle run as its README says (`tsx src/main.ts`) on a
 * database of its own: Drizzle's insert on ctx.tx commits with the handled mark,
 * a duplicate adds nothing, a throwing handler's insert rolls back.
 */
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPostgresTestDatabase, type TestDatabase } from '../support/postgres-db.js'

const exec = promisify(execFile)
const example = new URL('../../examples/postgres-drizzle/', import.meta.url).pathname
let db: TestDatabase
beforeAll(async () => {
  db = await createPostgresTestDatabase()
})
afterAll(async () => {
  await db.drop()
})

describe('examples/postgres-drizzle', () => {
  it('credits the ledger once, and not at all for a handler that threw', async () => {
    const { stdout } = await exec(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: example,
      env: { ...process.env, DATABASE_URL: db.url, AFFILIATE_WEBHOOK_SECRET: '' },
    })
    expect(stdout).toContain('--- a new event: 200 {"received":true,"outcome":"processed"}')
    expect(stdout).toContain(
      '--- the same event again: 200 {"received":true,"outcome":"duplicate"}',
    )
    expect(stdout).toMatch(/--- a handler that throws after its insert: 500 .*handler_failed/)
    expect(stdout).toContain('--- ledger: 1 row(s)')
    const { rows } = await db.pool.query('SELECT conversion_id, commission FROM example_ledger')
    expect(rows).toEqual([{ conversion_id: '8101', commission: '12.50' }])
  }, 60_000)
})

/**
 * examples/postgres-drizzle run as its README says, each recipe on a database
 * of its own: Drizzle on pg (`src/main.ts`), Drizzle on postgres.js
 * (`src/postgres-js.ts`), Kysely on pg (`src/kysely.ts`). The query builder's
 * insert on ctx.tx commits with the handled mark, a duplicate adds nothing, a
 * throwing handler's insert rolls back.
 */
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPostgresTestDatabase, type TestDatabase } from '../support/postgres-db.js'

const exec = promisify(execFile)
const example = new URL('../../examples/postgres-drizzle/', import.meta.url).pathname
describe.each([
  { recipe: 'Drizzle on pg', file: 'src/main.ts' },
  { recipe: 'Drizzle on postgres.js', file: 'src/postgres-js.ts' },
  { recipe: 'Kysely on pg', file: 'src/kysely.ts' },
])('examples/postgres-drizzle: $recipe', ({ file }) => {
  let db: TestDatabase
  beforeAll(async () => {
    db = await createPostgresTestDatabase()
  })
  afterAll(async () => {
    await db.drop()
  })

  it('credits the ledger once, and not at all for a handler that threw', async () => {
    const { stdout } = await exec(process.execPath, ['--import', 'tsx', file], {
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

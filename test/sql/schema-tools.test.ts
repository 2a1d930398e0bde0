/**
 * What an app's schema tool does to the Postgres store's tables (issue 51),
 * each tool run for real on a database of its own that already holds the
 * store's tables, functions and one handled event:
 * - Drizzle Kit's `push` diffs the database against the app's Drizzle schema:
 *   without `tablesFilter` it drops the store's tables (the de-duplication
 *   state is gone and a handled event looks new again); with
 *   `tablesFilter: ['!aw_*']` it creates the app's table and leaves them alone.
 * - Kysely's Migrator and Knex's migrations run only the migrations they are
 *   given: the store's tables are untouched, beside the tool's own bookkeeping
 *   tables.
 * Prisma Migrate is not run here: its schema engine is a download this machine
 * cannot reach (see prisma-clients.ts).
 */
import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { postgresStore } from '@affiliate-webhooks/postgres'
import { knex } from 'knex'
import { Kysely, PostgresDialect } from 'kysely'
import { type Migration, Migrator } from 'kysely/migration'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPostgresTestDatabase, type TestDatabase } from '../support/postgres-db.js'

const exec = promisify(execFile)
const root = new URL('../../', import.meta.url).pathname
const drizzleKit = join(root, 'node_modules/drizzle-kit/bin.cjs')

const STORE_TABLES = ['aw_conversions', 'aw_events', 'aw_schema', 'aw_streak']
const HANDLED = { eventId: 'evt_schema_tools', conversionId: 5101, order: 10 }

/** The store's tables made by its own ready(), and one event handled through it. */
async function storeWithOneHandledEvent(db: TestDatabase, schema?: string): Promise<void> {
  const store = postgresStore({ pool: db.pool, logger: false, schema })
  await store.ready()
  const begun = await store.begin(HANDLED)
  if (begun.status !== 'claimed') throw new Error(`expected claimed, got ${begun.status}`)
  expect(await store.commit(begun.claim)).toBe(true)
}

/** The tables of a schema, by name. */
async function tables(db: TestDatabase, schema = 'public'): Promise<string[]> {
  const { rows } = await db.pool.query<{ name: string }>(
    'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1',
    [schema],
  )
  return rows.map((row) => row.name)
}

/** The store's functions present in a schema. */
async function storeFunctions(db: TestDatabase, schema = 'public'): Promise<string[]> {
  const { rows } = await db.pool.query<{ name: string }>(
    `SELECT proname AS name FROM pg_proc JOIN pg_namespace n ON n.oid = pronamespace
     WHERE nspname = $1 AND proname LIKE 'aw\\_%' ORDER BY 1`,
    [schema],
  )
  return rows.map((row) => row.name)
}

/** The store's tables, functions and handled mark, all still there: a fresh store sees a duplicate. */
async function expectStoreIntact(
  db: TestDatabase,
  functions: string[],
  schema?: string,
): Promise<void> {
  expect(await tables(db, schema)).toEqual(expect.arrayContaining(STORE_TABLES))
  expect(await storeFunctions(db, schema)).toEqual(functions)
  const { rows } = await db.pool.query(
    `SELECT conversion_id, event_id FROM ${schema ? `${schema}.` : ''}aw_conversions`,
  )
  expect(rows).toEqual([{ conversion_id: String(HANDLED.conversionId), event_id: HANDLED.eventId }])
  expect(await postgresStore({ pool: db.pool, logger: false, schema }).peek(HANDLED)).toBe(
    'duplicate',
  )
}

/**
 * An app's Drizzle project in .tmp/: one table of its own (`ledger`) and two
 * configs, `filtered.config.ts` with tablesFilter ['!aw_*'] and
 * `unfiltered.config.ts` without; migrations (generate) go to `./drizzle`.
 */
function drizzleProject(db: TestDatabase): {
  dir: string
  kit: (...args: string[]) => Promise<string>
} {
  const dir = join(root, '.tmp', `schema-tools-${randomUUID().slice(0, 8)}`)
  mkdirSync(dir, { recursive: true })
  writeFileSync(
    join(dir, 'schema.ts'),
    `import { bigint, pgTable, text } from 'drizzle-orm/pg-core'

export const ledger = pgTable('ledger', {
  conversionId: bigint('conversion_id', { mode: 'number' }).primaryKey(),
  note: text('note'),
})
`,
  )
  for (const [name, filter] of [
    ['filtered.config.ts', "\n  tablesFilter: ['!aw_*'],"],
    ['unfiltered.config.ts', ''],
  ] as const) {
    writeFileSync(
      join(dir, name),
      `export default {
  dialect: 'postgresql',
  schema: './schema.ts',
  out: './drizzle',
  dbCredentials: { url: ${JSON.stringify(db.url)} },${filter}
}
`,
    )
  }
  const kit = async (...args: string[]) => {
    // Drizzle Kit prints its errors and still exits 0: the output and the
    // database are what the tests check.
    const { stdout, stderr } = await exec(process.execPath, [drizzleKit, ...args], {
      cwd: dir,
      timeout: 60_000,
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
    })
    return `${stdout}\n${stderr}`
  }
  return { dir, kit }
}

describe('Drizzle Kit push on a database holding the Postgres store', () => {
  let db: TestDatabase
  let project: ReturnType<typeof drizzleProject>
  let functions: string[]
  beforeAll(async () => {
    db = await createPostgresTestDatabase()
    await storeWithOneHandledEvent(db)
    functions = await storeFunctions(db)
    project = drizzleProject(db)
  })
  afterAll(async () => {
    if (project) rmSync(project.dir, { recursive: true, force: true })
    await db.drop()
  })

  it("with tablesFilter: ['!aw_*'] it creates the app's table and leaves the store's tables, functions and rows alone", async () => {
    // No --force: nothing to drop, so nothing to confirm.
    const output = await project.kit('push', '--config=filtered.config.ts', '--verbose')
    expect(output).toContain('CREATE TABLE "ledger"')
    expect(output).not.toMatch(/aw_/)
    expect(await tables(db)).toEqual(['ledger', ...STORE_TABLES].sort())
    await expectStoreIntact(db, functions)
  }, 90_000)

  it('without tablesFilter, push --force drops every table of the store: the handled event looks new again', async () => {
    // Run after the filtered push, so `ledger` exists and Drizzle Kit has no
    // "created or renamed?" question to ask: only the drops are left.
    const output = await project.kit(
      'push',
      '--config=unfiltered.config.ts',
      '--verbose',
      '--force',
    )
    for (const table of STORE_TABLES) expect(output).toContain(`DROP TABLE "${table}" CASCADE`)
    expect(await tables(db)).toEqual(['ledger'])
    // Its functions stay, orphaned: Drizzle Kit does not manage functions.
    expect(await storeFunctions(db)).toEqual(functions)
    // A store starting afterwards makes empty tables: the mark is gone.
    expect(await postgresStore({ pool: db.pool, logger: false }).peek(HANDLED)).toBe('unsettled')
  }, 90_000)
})

describe('Drizzle Kit generate and migrate on a database holding the Postgres store', () => {
  let db: TestDatabase
  let project: ReturnType<typeof drizzleProject>
  beforeAll(async () => {
    db = await createPostgresTestDatabase()
    project = drizzleProject(db)
  })
  afterAll(async () => {
    if (project) rmSync(project.dir, { recursive: true, force: true })
    await db.drop()
  })

  it("without tablesFilter: generate diffs the schema file against its own snapshots, never the database, and migrate applies only that SQL; the store's tables stay beside drizzle.__drizzle_migrations", async () => {
    await storeWithOneHandledEvent(db)
    const functions = await storeFunctions(db)
    await project.kit('generate', '--config=unfiltered.config.ts')
    const migrations = readdirSync(join(project.dir, 'drizzle')).filter((f) => f.endsWith('.sql'))
    expect(migrations).toHaveLength(1)
    const sql = readFileSync(join(project.dir, 'drizzle', migrations[0] as string), 'utf8')
    expect(sql).toContain('CREATE TABLE "ledger"')
    expect(sql).not.toMatch(/aw_|DROP/)
    await project.kit('migrate', '--config=unfiltered.config.ts')
    expect(await tables(db)).toEqual(['ledger', ...STORE_TABLES].sort())
    expect(await tables(db, 'drizzle')).toEqual(['__drizzle_migrations'])
    await expectStoreIntact(db, functions)
  }, 90_000)
})

describe('Drizzle Kit push with the Postgres store in a schema of its own', () => {
  let db: TestDatabase
  let project: ReturnType<typeof drizzleProject>
  beforeAll(async () => {
    db = await createPostgresTestDatabase()
    project = drizzleProject(db)
  })
  afterAll(async () => {
    if (project) rmSync(project.dir, { recursive: true, force: true })
    await db.drop()
  })

  it("postgresStore({ schema: 'webhooks' }): push --force without tablesFilter leaves it, as Drizzle Kit looks only at public (schemaFilter's default)", async () => {
    await storeWithOneHandledEvent(db, 'webhooks')
    const functions = await storeFunctions(db, 'webhooks')
    expect(functions.length).toBeGreaterThan(0)
    const output = await project.kit(
      'push',
      '--config=unfiltered.config.ts',
      '--verbose',
      '--force',
    )
    expect(output).toContain('CREATE TABLE "ledger"')
    expect(output).not.toMatch(/aw_|DROP/)
    expect(await tables(db)).toEqual(['ledger'])
    expect(await tables(db, 'webhooks')).toEqual(STORE_TABLES)
    await expectStoreIntact(db, functions, 'webhooks')
  }, 90_000)
})

describe("Kysely's Migrator on a database holding the Postgres store", () => {
  let db: TestDatabase
  beforeAll(async () => {
    db = await createPostgresTestDatabase()
  })
  afterAll(async () => {
    await db.drop()
  })

  it('runs only its migrations, up and down: the store keeps its tables, functions and rows, beside kysely_migration and kysely_migration_lock', async () => {
    await storeWithOneHandledEvent(db)
    const functions = await storeFunctions(db)
    // Kysely ends the pool it is given on destroy(): a pool of its own.
    const kysely = new Kysely<unknown>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: db.url, max: 2 }) }),
    })
    const ledger: Migration = {
      async up(k) {
        await k.schema
          .createTable('ledger')
          .addColumn('conversion_id', 'bigint', (c) => c.primaryKey())
          .execute()
      },
      async down(k) {
        await k.schema.dropTable('ledger').execute()
      },
    }
    const migrator = new Migrator({
      db: kysely,
      provider: { getMigrations: async () => ({ '0001_ledger': ledger }) },
    })
    try {
      const up = await migrator.migrateToLatest()
      expect(up.error).toBeUndefined()
      expect(up.results).toEqual([
        { migrationName: '0001_ledger', direction: 'Up', status: 'Success' },
      ])
      expect(await tables(db)).toEqual(
        ['kysely_migration', 'kysely_migration_lock', 'ledger', ...STORE_TABLES].sort(),
      )
      await expectStoreIntact(db, functions)
      const down = await migrator.migrateDown()
      expect(down.error).toBeUndefined()
      expect(await tables(db)).toEqual(
        ['kysely_migration', 'kysely_migration_lock', ...STORE_TABLES].sort(),
      )
      await expectStoreIntact(db, functions)
    } finally {
      await kysely.destroy()
    }
  }, 60_000)
})

describe('Knex migrations on a database holding the Postgres store', () => {
  let db: TestDatabase
  beforeAll(async () => {
    db = await createPostgresTestDatabase()
  })
  afterAll(async () => {
    await db.drop()
  })

  it('runs only its migrations, latest and rollback: the store keeps its tables, functions and rows, beside knex_migrations and knex_migrations_lock', async () => {
    await storeWithOneHandledEvent(db)
    const functions = await storeFunctions(db)
    const k = knex({ client: 'pg', connection: db.url, pool: { min: 0, max: 2 } })
    const migrationSource = {
      getMigrations: async () => ['0001_ledger'],
      getMigrationName: (name: string) => name,
      getMigration: async () => ({
        up: (kx: typeof k) =>
          kx.schema.createTable('ledger', (t) => t.bigInteger('conversion_id').primary()),
        down: (kx: typeof k) => kx.schema.dropTable('ledger'),
      }),
    }
    try {
      const [, applied] = await k.migrate.latest({ migrationSource })
      expect(applied).toEqual(['0001_ledger'])
      expect(await tables(db)).toEqual(
        ['knex_migrations', 'knex_migrations_lock', 'ledger', ...STORE_TABLES].sort(),
      )
      await expectStoreIntact(db, functions)
      const [, rolledBack] = await k.migrate.rollback({ migrationSource })
      expect(rolledBack).toEqual(['0001_ledger'])
      expect(await tables(db)).toEqual(
        ['knex_migrations', 'knex_migrations_lock', ...STORE_TABLES].sort(),
      )
      await expectStoreIntact(db, functions)
    } finally {
      await k.destroy()
    }
  }, 60_000)
})

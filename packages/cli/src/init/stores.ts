/**
 * The stores `init` can set up, as data: what in an app's dependencies points
 * at each, the packages it needs, how the shared module makes it (once per
 * process, so a dev server's reloads do not open a pool each time), and how
 * the typed `onConversion` writes a conversion through `ctx.tx`.
 */

/** What a store's code is written from. */
export interface StoreContext {
  typescript: boolean
  /** The Prisma client's import, relative to the shared module, when the store is Prisma's. */
  prismaClientImport?: string
}

/** One store: how to find it and what `init` writes for it. */
export interface StoreKind {
  id: 'memory' | 'redis' | 'postgres' | 'postgres-js' | 'mysql' | 'sqlite' | 'prisma'
  name: string
  /** Any of these dependencies points at the store (the first store found in this table's order wins). */
  dependencies: readonly string[]
  /** The packages the app installs for it (besides the adapter). */
  packages: readonly string[]
  /** Whether `ctx.tx` is a transaction in the app's database (exactly once there). */
  sql: boolean
  /** The environment variable it connects with, for `.env`. */
  urlEnv?: string
  /** The value `.env` gets for it (empty when only the app can know it). */
  urlDefault?: string
  /** The imports and the code that make `store` (and export it). */
  make(c: StoreContext): { imports: string[]; code: string }
  /** The body of `onConversion(conversion, event, ctx)`. */
  write: string
  /**
   * The app's own table, when the store writes one: created once, before any
   * delivery, by the setup script (never in a delivery: two first deliveries
   * creating it at once collide, and MySQL commits before DDL).
   */
  table?: string
  /**
   * The setup script's parts (plain ESM, the app's own driver): the import, the
   * expression that opens a connection (`url` holds the variable's value), and
   * the calls on it (`db`) that run `TABLE` and close it.
   */
  setup?: { import: string; open: string; run: string; close: string }
}

const kept = (c: StoreContext, name: string, type: string, make: string) =>
  c.typescript
    ? `const kept = globalThis as typeof globalThis & { ${name}?: ${type} }\nkept.${name} ??= ${make}\nexport const store = kept.${name}`
    : `globalThis.${name} ??= ${make}\nexport const store = globalThis.${name}`

/** What the generated handler logs for a store with no table of the app's: a template literal of the generated code. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: the placeholders belong to the code init writes.
const LOG_LINE = 'console.log(`conversion ${conversion.id}: ${conversion.status} (${event.id})`)'

/** The app's table on PostgreSQL, the same through pg and postgres.js. */
const POSTGRES_TABLE =
  'CREATE TABLE IF NOT EXISTS affiliate_conversions (conversion_id bigint PRIMARY KEY, status text NOT NULL, commission numeric(12, 2), currency text, event_id text NOT NULL)'

const UPSERT_COLUMNS = '(conversion_id, status, commission, currency, event_id)'
const VALUES =
  '[conversion.id, conversion.status, conversion.commission, conversion.currency, event.id]'

export const STORES: readonly StoreKind[] = [
  {
    id: 'prisma',
    name: 'Prisma',
    dependencies: ['@prisma/client'],
    packages: ['@affiliate-webhooks/prisma'],
    sql: true,
    urlEnv: 'DATABASE_URL',
    make: (c) => ({
      imports: [
        c.typescript
          ? "import { type PrismaEventStore, type PrismaTransaction, prismaStore } from '@affiliate-webhooks/prisma'"
          : "import { prismaStore } from '@affiliate-webhooks/prisma'",
        `import { PrismaClient } from '${c.prismaClientImport ?? './generated/prisma/client'}'`,
        "import { PrismaPg } from '@prisma/adapter-pg'",
      ],
      code: `${kept(c, 'affiliateWebhookStore', 'PrismaEventStore<PrismaTransaction<PrismaClient>>', "prismaStore({\n  prisma: new PrismaClient({ adapter: new PrismaPg({ connectionString: required('DATABASE_URL') }) }),\n})")}`,
    }),
    write: `  const { status, commission, currency } = conversion
  await ctx.tx.affiliateConversion.upsert({
    where: { conversionId: BigInt(conversion.id) },
    create: { conversionId: BigInt(conversion.id), status, commission, currency, eventId: event.id },
    update: { status, commission, currency, eventId: event.id },
  })`,
  },
  {
    id: 'postgres',
    name: 'PostgreSQL (node-postgres)',
    dependencies: ['pg'],
    packages: ['@affiliate-webhooks/postgres'],
    sql: true,
    urlEnv: 'DATABASE_URL',
    table: POSTGRES_TABLE,
    make: (c) => ({
      imports: [
        c.typescript
          ? "import { type PostgresEventStore, postgresStore } from '@affiliate-webhooks/postgres'"
          : "import { postgresStore } from '@affiliate-webhooks/postgres'",
        "import pg from 'pg'",
      ],
      code: kept(
        c,
        'affiliateWebhookStore',
        'PostgresEventStore',
        "postgresStore({ pool: new pg.Pool({ connectionString: required('DATABASE_URL') }) })",
      ),
    }),
    setup: {
      import: "import pg from 'pg'",
      open: 'new pg.Pool({ connectionString: url })',
      run: 'query(TABLE)',
      close: 'end()',
    },
    write: `  await ctx.tx.query(
    'INSERT INTO affiliate_conversions ${UPSERT_COLUMNS} VALUES ($1, $2, $3, $4, $5) ON CONFLICT (conversion_id) DO UPDATE SET status = EXCLUDED.status, commission = EXCLUDED.commission, currency = EXCLUDED.currency, event_id = EXCLUDED.event_id',
    ${VALUES},
  )`,
  },
  {
    id: 'postgres-js',
    name: 'PostgreSQL (postgres.js)',
    dependencies: ['postgres'],
    packages: ['@affiliate-webhooks/postgres'],
    sql: true,
    urlEnv: 'DATABASE_URL',
    table: POSTGRES_TABLE,
    make: (c) => ({
      imports: [
        c.typescript
          ? "import { type PostgresJsEventStore, postgresStore } from '@affiliate-webhooks/postgres'"
          : "import { postgresStore } from '@affiliate-webhooks/postgres'",
        "import postgres from 'postgres'",
      ],
      code: kept(
        c,
        'affiliateWebhookStore',
        'PostgresJsEventStore',
        "postgresStore({ sql: postgres(required('DATABASE_URL')) })",
      ),
    }),
    setup: {
      import: "import postgres from 'postgres'",
      // Quiet: a second run's "already exists, skipping" notice is no news.
      open: 'postgres(url, { onnotice: () => {} })',
      run: 'unsafe(TABLE)',
      close: 'end()',
    },
    write: `  await ctx.tx\`INSERT INTO affiliate_conversions ${UPSERT_COLUMNS} VALUES (\${conversion.id}, \${conversion.status}, \${conversion.commission}, \${conversion.currency}, \${event.id}) ON CONFLICT (conversion_id) DO UPDATE SET status = EXCLUDED.status, commission = EXCLUDED.commission, currency = EXCLUDED.currency, event_id = EXCLUDED.event_id\``,
  },
  {
    id: 'mysql',
    name: 'MySQL or MariaDB (mysql2)',
    dependencies: ['mysql2'],
    packages: ['@affiliate-webhooks/mysql'],
    sql: true,
    urlEnv: 'DATABASE_URL',
    table:
      'CREATE TABLE IF NOT EXISTS affiliate_conversions (conversion_id bigint PRIMARY KEY, status varchar(32) NOT NULL, commission decimal(12, 2), currency varchar(8), event_id varchar(64) NOT NULL)',
    make: (c) => ({
      imports: [
        c.typescript
          ? "import { type MysqlEventStore, mysqlStore } from '@affiliate-webhooks/mysql'"
          : "import { mysqlStore } from '@affiliate-webhooks/mysql'",
        "import mysql from 'mysql2/promise'",
      ],
      code: kept(
        c,
        'affiliateWebhookStore',
        'MysqlEventStore',
        "mysqlStore({ pool: mysql.createPool(required('DATABASE_URL')) })",
      ),
    }),
    setup: {
      import: "import mysql from 'mysql2/promise'",
      open: 'await mysql.createConnection(url)',
      run: 'query(TABLE)',
      close: 'end()',
    },
    write: `  await ctx.tx.query(
    'INSERT INTO affiliate_conversions ${UPSERT_COLUMNS} VALUES (?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE status = VALUES(status), commission = VALUES(commission), currency = VALUES(currency), event_id = VALUES(event_id)',
    ${VALUES},
  )`,
  },
  {
    id: 'sqlite',
    name: 'SQLite (better-sqlite3)',
    dependencies: ['better-sqlite3'],
    packages: ['@affiliate-webhooks/sqlite'],
    sql: true,
    urlEnv: 'SQLITE_FILE',
    urlDefault: 'app.db',
    table:
      'CREATE TABLE IF NOT EXISTS affiliate_conversions (conversion_id INTEGER PRIMARY KEY, status TEXT NOT NULL, commission TEXT, currency TEXT, event_id TEXT NOT NULL)',
    make: (c) => ({
      imports: [
        c.typescript
          ? "import { type SqliteEventStore, sqliteStore } from '@affiliate-webhooks/sqlite'"
          : "import { sqliteStore } from '@affiliate-webhooks/sqlite'",
        "import Database from 'better-sqlite3'",
      ],
      code: kept(
        c,
        'affiliateWebhookStore',
        'SqliteEventStore',
        "sqliteStore({ database: new Database(process.env.SQLITE_FILE || 'app.db') })",
      ),
    }),
    setup: {
      import: "import Database from 'better-sqlite3'",
      open: "new Database(process.env.SQLITE_FILE || 'app.db')",
      run: 'exec(TABLE)',
      close: 'close()',
    },
    write: `  ctx.tx
    .prepare(
      'INSERT INTO affiliate_conversions ${UPSERT_COLUMNS} VALUES (?, ?, ?, ?, ?) ON CONFLICT (conversion_id) DO UPDATE SET status = excluded.status, commission = excluded.commission, currency = excluded.currency, event_id = excluded.event_id',
    )
    .run(${VALUES.slice(1, -1)})`,
  },
  {
    id: 'redis',
    name: 'Redis (ioredis)',
    dependencies: ['ioredis'],
    packages: ['@affiliate-webhooks/redis'],
    sql: false,
    urlEnv: 'REDIS_URL',
    urlDefault: 'redis://127.0.0.1:6379',
    make: (c) => ({
      imports: [
        c.typescript
          ? "import { type RedisEventStore, redisStore } from '@affiliate-webhooks/redis'"
          : "import { redisStore } from '@affiliate-webhooks/redis'",
      ],
      code: kept(
        c,
        'affiliateWebhookStore',
        'RedisEventStore',
        "redisStore({ url: process.env.REDIS_URL || 'redis://127.0.0.1:6379' })",
      ),
    }),
    write: `  // Your effect here: de-duplicated and ordered by the Redis store, at least once.
  ${LOG_LINE}`,
  },
  {
    id: 'memory',
    name: 'memory (one process)',
    dependencies: [],
    packages: ['@affiliate-webhooks/core'],
    sql: false,
    make: (c) => ({
      imports: ["import { memoryStore } from '@affiliate-webhooks/core'"],
      code: kept(c, 'affiliateWebhookStore', 'EventStore', 'memoryStore()'),
    }),
    write: `  // Your effect here: de-duplicated and ordered in this process's memory.
  ${LOG_LINE}`,
  },
]

/** The store with this id, or undefined. */
export const storeById = (id: string): StoreKind | undefined =>
  STORES.find((store) => store.id === id)

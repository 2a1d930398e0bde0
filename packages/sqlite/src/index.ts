export type { HeldEvent, HeldResolution, HeldResolved } from '@affiliate-webhooks/core'
export type { SqliteDatabase, SqliteStatement } from './database.js'
export { SQLITE_SCHEMA_VERSION, type SqliteSchemaOptions, sqliteSchema } from './schema.js'
export { type SqliteEventStore, type SqliteStoreOptions, sqliteStore } from './sqlite-store.js'

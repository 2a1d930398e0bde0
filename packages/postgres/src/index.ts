export {
  type PostgresEventStore,
  type PostgresStoreOptions,
  postgresStore,
} from './postgres-store.js'
export type {
  PostgresJsEventStore,
  PostgresJsSql,
  PostgresJsStoreOptions,
  PostgresJsTransaction,
} from './postgresjs-store.js'
export { POSTGRES_SCHEMA_VERSION, type PostgresSchemaOptions, postgresSchema } from './schema.js'

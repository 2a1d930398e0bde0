export { describeDatabase } from './errors.js'
export {
  type PostgresEventStore,
  type PostgresStoreOptions,
  PRUNE_EVERY_MS,
  postgresStore,
} from './postgres-store.js'
export { POSTGRES_SCHEMA_VERSION, type PostgresSchemaOptions, postgresSchema } from './schema.js'

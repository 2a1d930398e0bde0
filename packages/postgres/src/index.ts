export {
  type PostgresEventStore,
  type PostgresStoreOptions,
  postgresStore,
} from './postgres-store.js'
export { POSTGRES_SCHEMA_VERSION, type PostgresSchemaOptions, postgresSchema } from './schema.js'

export { PRUNE_EVERY_MS } from '@affiliate-webhooks/core/internal'
export { describeDatabase } from './errors.js'
export {
  type MysqlEventStore,
  type MysqlStoreOptions,
  mysqlStore,
} from './mysql-store.js'
export {
  MYSQL_SCHEMA_VERSION,
  type MysqlSchemaOptions,
  mysqlSchema,
  mysqlSchemaStatements,
} from './schema.js'

export { describeDatabase } from './errors.js'
export {
  type MysqlEventStore,
  type MysqlStoreOptions,
  mysqlStore,
  PRUNE_EVERY_MS,
} from './mysql-store.js'
export { MYSQL_SCHEMA_VERSION, type MysqlSchemaOptions, mysqlSchema } from './schema.js'

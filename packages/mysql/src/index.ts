export type { HeldEvent, HeldResolution, HeldResolved } from '@affiliate-webhooks/core'
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

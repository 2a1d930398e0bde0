import { mysqlStore } from '@affiliate-webhooks/mysql'
import { afterAll, beforeAll } from 'vitest'
import { createMysqlTestDatabase, type MysqlTestDatabase } from './mysql-db.js'
import { storeContract } from './store-contract.js'

let db: MysqlTestDatabase
beforeAll(async () => {
  // Cases leave claims open (each holds a connection until its lease runs out).
  db = await createMysqlTestDatabase({ connectionLimit: 60 })
})
afterAll(async () => {
  await db?.drop()
})

/** A store's own tables for a case that asks for a prefix (the streak is one per table set). */
const tablePrefix = (prefix: string | undefined) =>
  prefix === undefined ? undefined : `${prefix.toLowerCase().replace(/[^a-z0-9_]/g, '_')}`

storeContract('mysqlStore', async ({ prefix, ...options }) => {
  const store = mysqlStore({ pool: db.pool, tablePrefix: tablePrefix(prefix), ...options })
  await store.ready()
  return store
})

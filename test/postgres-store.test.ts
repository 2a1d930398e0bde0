import { randomUUID } from 'node:crypto'
import { postgresSchema, postgresStore } from '@affiliate-webhooks/postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPostgresTestDatabase, type TestDatabase } from './postgres-db.js'
import { storeContract } from './store-contract.js'

let db: TestDatabase
beforeAll(async () => {
  db = await createPostgresTestDatabase()
})
afterAll(async () => {
  await db.drop()
})

const prefixFor = (prefix: string | undefined) =>
  prefix === undefined ? 'aw_' : `aw_${prefix.replace(/[^a-z0-9]/gi, '').toLowerCase().slice(-8)}_`

storeContract('postgresStore', ({ prefix, ...timings }) =>
  postgresStore({ pool: db.pool, tablePrefix: prefixFor(prefix), logger: false, ...timings }),
)

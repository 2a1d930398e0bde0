/**
 * `store.close()` on every store, for a graceful shutdown: it ends the client,
 * pool, instance or database the store uses, waits at most `timeoutMs` for a
 * clean end, never rejects (a Redis already gone, a claim still open), says in
 * one line of the logger when the end was not clean, and a second call changes
 * nothing. A process whose SIGTERM handler closes the server and then the store
 * exits by itself, with Redis up or down.
 */
import { fork } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { once } from 'node:events'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { memoryStore } from '@affiliate-webhooks/core'
import { mysqlStore } from '@affiliate-webhooks/mysql'
import { postgresStore } from '@affiliate-webhooks/postgres'
import { type PrismaClientLike, prismaStore } from '@affiliate-webhooks/prisma'
import { redisStore } from '@affiliate-webhooks/redis'
import { sqliteStore } from '@affiliate-webhooks/sqlite'
import { type Cluster, Redis } from 'ioredis'
import mysql from 'mysql2/promise'
import pg from 'pg'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSqliteTestFile, openSqlite } from '../sql/sqlite-db.js'
import { createMysqlTestDatabase, type MysqlTestDatabase } from '../support/mysql-db.js'
import { createPostgresTestDatabase, type TestDatabase } from '../support/postgres-db.js'
import { freePort, type RedisServer, startRedis } from '../support/redis-servers.js'

/** A logger that keeps its lines. */
function recorder() {
  const lines: string[] = []
  return {
    lines,
    logger: { warn: (line: string) => lines.push(line), error: (line: string) => lines.push(line) },
  }
}

/** Ended for good: Redis back on its port, the client never connects again. */
async function expectNoReconnect(client: Redis | Cluster, server: RedisServer): Promise<void> {
  let connected = false
  client.on('connect', () => {
    connected = true
  })
  await server.restart()
  await new Promise((resolve) => setTimeout(resolve, 1500))
  expect(connected).toBe(false)
  expect(client.status).not.toBe('ready')
}

/** How long `work` took, ms; it must not reject. */
async function timed(work: () => Promise<void>): Promise<number> {
  const started = performance.now()
  await work()
  return performance.now() - started
}

describe('store.close(): Redis', () => {
  let server: RedisServer
  beforeAll(async () => {
    server = await startRedis()
  })
  afterAll(() => server?.stop())

  it('a store made from a URL quits its client; a second close() changes nothing', async () => {
    const { lines, logger } = recorder()
    const store = redisStore({ url: server.url, prefix: `close-${randomUUID()}:`, logger })
    await store.begin({ eventId: `evt_${randomUUID()}`, order: 1 })
    await store.close()
    await expect.poll(() => store.client.status).toBe('end')
    await store.close()
    expect(lines).toEqual([])
  })

  it('with Redis gone (ioredis defaults), close() resolves within its timeout and ends the client, never rejects', async () => {
    const down = await startRedis()
    // ioredis's defaults (the offline queue on): QUIT would wait for Redis forever.
    const client = new Redis(down.url, { lazyConnect: false })
    client.on('error', () => {})
    const { lines, logger } = recorder()
    const store = redisStore({ client, logger })
    await client.ping()
    await down.kill()
    const ms = await timed(() => store.close({ timeoutMs: 500 }))
    expect(ms).toBeLessThan(2000)
    // Ended cleanly (QUIT on a lost connection ends it), or at once: QUIT queued
    // for a Redis that is gone, or refused because ioredis had already seen the
    // connection close (which of the three depends on when the client notices the
    // kill). Either way, at most one line, saying why, and no reconnect.
    expect(lines.length).toBeLessThanOrEqual(1)
    for (const line of lines) {
      expect(line).toMatch(
        /^redisStore: close\(\): the connection did not end cleanly \((not within 500 ms|Connection is closed\.)\); it was ended at once$/,
      )
    }
    await expectNoReconnect(client, down)
    await down.stop()
  })

  it('with the recommended options and Redis gone, QUIT fails at once: the client is ended, never reconnects, one line says so', async () => {
    const down = await startRedis()
    const { lines, logger } = recorder()
    const store = redisStore({ url: down.url, logger: false })
    await once(store.client, 'ready')
    await down.kill()
    // Let the client see the connection is gone.
    await new Promise((resolve) => setTimeout(resolve, 200))
    const close = redisStore({ client: store.client, logger }).close
    const ms = await timed(() => close({ timeoutMs: 5000 }))
    expect(ms).toBeLessThan(2000)
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(
      /^redisStore: close\(\): the connection did not end cleanly \(Stream isn't writeable.*\); it was ended at once$/,
    )
    await expectNoReconnect(store.client, down)
    await down.stop()
  })

  it('a timeoutMs that is not a whole number of ms is a mistake in the call, thrown where it is made', () => {
    const store = redisStore({ url: server.url, logger: false })
    expect(() => store.close({ timeoutMs: -1 })).toThrow(
      'redisStore: close(): `timeoutMs` must be a whole number of milliseconds >= 0; got -1',
    )
    store.client.disconnect()
  })
})

describe('store.close(): PostgreSQL', () => {
  let db: TestDatabase
  beforeAll(async () => {
    db = await createPostgresTestDatabase()
  })
  afterAll(() => db?.drop())

  it('pg: ends the pool; with a claim still open it waits no longer than timeoutMs and says so', async () => {
    const pool = new pg.Pool({ connectionString: db.url, max: 4 })
    const { lines, logger } = recorder()
    const store = postgresStore({ pool, logger })
    const begun = await store.begin({ eventId: `evt_${randomUUID()}`, order: 1 })
    expect(begun.status).toBe('claimed')
    const ms = await timed(() => store.close({ timeoutMs: 300 }))
    expect(ms).toBeGreaterThanOrEqual(250)
    expect(ms).toBeLessThan(2000)
    expect(lines).toEqual([
      'postgresStore: close(): the connection did not end cleanly (not within 300 ms); it ends once what still holds it is done',
    ])
    // The claim's connection goes back: the pool then ends.
    if (begun.status === 'claimed') await store.release(begun.claim)
    await expect.poll(() => (pool as unknown as { ended: boolean }).ended).toBe(true)
    expect(pool.totalCount).toBe(0)
  })

  it('postgres.js: ends the instance, its connections with it', async () => {
    const sql = postgres(db.url, { max: 3, onnotice: () => {} })
    const { lines, logger } = recorder()
    const store = postgresStore({ sql, logger })
    await store.ready()
    await store.close({ timeoutMs: 3000 })
    await expect(sql`SELECT 1`).rejects.toMatchObject({ code: 'CONNECTION_ENDED' })
    expect(lines).toEqual([])
  })

  it('postgres.js: with the server gone, close() is bounded and never rejects', async () => {
    const port = await freePort()
    // Nothing listens: every connection attempt fails.
    const sql = postgres(`postgres://postgres@127.0.0.1:${port}/none`, {
      max: 2,
      connect_timeout: 30,
    })
    const store = postgresStore({ sql, logger: false })
    const attempt = store.ready().catch(() => {})
    const ms = await timed(() => store.close({ timeoutMs: 1000 }))
    expect(ms).toBeLessThan(3000)
    await attempt
  })
})

describe('store.close(): MySQL', () => {
  let db: MysqlTestDatabase
  beforeAll(async () => {
    db = await createMysqlTestDatabase()
  })
  afterAll(() => db?.drop())

  it('ends the pool', async () => {
    const pool = mysql.createPool(`${db.url}?connectionLimit=3`)
    const store = mysqlStore({ pool, logger: false })
    await store.ready()
    await store.close()
    await expect(pool.query('SELECT 1')).rejects.toThrow(/closed/i)
  })
})

describe('store.close(): SQLite', () => {
  it('closes the database once no delivery is in flight', async () => {
    const file = createSqliteTestFile()
    const database = openSqlite('node:sqlite', file.file)
    const store = sqliteStore({ database })
    await store.ready()
    await store.close()
    expect(() => database.prepare('SELECT 1')).toThrow()
    file.drop()
  })

  it('a delivery still open at the deadline: the connection is closed, its transaction rolled back, nothing marked', async () => {
    const file = createSqliteTestFile()
    const database = openSqlite('better-sqlite3', file.file)
    const { lines, logger } = recorder()
    const store = sqliteStore({ database, logger })
    const eventId = `evt_${randomUUID()}`
    const begun = await store.begin({ eventId, order: 1 })
    expect(begun.status).toBe('claimed')
    const ms = await timed(() => store.close({ timeoutMs: 200 }))
    expect(ms).toBeLessThan(2000)
    expect(lines).toEqual([
      'sqliteStore: close(): the connection did not end cleanly (not within 200 ms); it was ended at once',
    ])
    // Reopened: the event is not marked handled, so the retry runs it.
    const again = sqliteStore({ database: openSqlite('better-sqlite3', file.file) })
    expect((await again.begin({ eventId, order: 1 })).status).toBe('claimed')
    await again.close({ timeoutMs: 100 })
    file.drop()
  })
})

describe('store.close(): Prisma and memory', () => {
  it('prisma: disconnects the client, bounded when it never answers', async () => {
    let disconnected = 0
    const client = (hang: boolean) =>
      ({
        _activeProvider: 'postgresql',
        $transaction: async () => {},
        $queryRawUnsafe: async () => [],
        $executeRawUnsafe: async () => 0,
        $disconnect: () => {
          disconnected++
          return hang ? new Promise<void>(() => {}) : Promise.resolve()
        },
      }) as unknown as PrismaClientLike
    await prismaStore({ prisma: client(false), logger: false }).close()
    expect(disconnected).toBe(1)
    const { lines, logger } = recorder()
    const ms = await timed(() =>
      prismaStore({ prisma: client(true), logger }).close({ timeoutMs: 200 }),
    )
    expect(ms).toBeLessThan(2000)
    expect(disconnected).toBe(2)
    expect(lines).toHaveLength(1)
  })

  it('memory: nothing to end, resolves at once', async () => {
    await expect(memoryStore().close?.()).resolves.toBeUndefined()
  })
})

describe('a Node server whose SIGTERM handler closes the server, then the store', () => {
  // Inside the workspace (.tmp/ is git-ignored), so the packages resolve by name.
  const dir = join(import.meta.dirname, '..', '..', '.tmp')
  const app = join(dir, `close-${randomUUID()}.mjs`)
  afterAll(() => rmSync(app, { force: true }))
  beforeAll(() => {
    mkdirSync(dir, { recursive: true })
    writeFileSync(
      app,
      `import { createServer } from 'node:http'
import { once } from 'node:events'
import { affiliateWebhook } from '@affiliate-webhooks/node'
import { redisStore } from '@affiliate-webhooks/redis'
const store = redisStore({ url: process.env.REDIS_URL, logger: false })
const server = createServer(affiliateWebhook({ path: '/hooks', secret: 'whsec_close', store, onConversion() {} }))
await once(store.client, 'ready')
server.listen(0, '127.0.0.1', () => process.send({ ready: true }))
process.on('SIGTERM', async () => {
  server.close()
  await store.close({ timeoutMs: 1000 })
})
`,
    )
  })

  for (const redisUp of [true, false]) {
    it(`exits by itself${redisUp ? '' : ', with Redis gone'}`, async () => {
      const server = await startRedis()
      const child = fork(app, {
        env: { ...process.env, REDIS_URL: server.url },
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      })
      await once(child, 'message')
      if (!redisUp) await server.kill()
      const exited = once(child, 'exit')
      const started = performance.now()
      child.kill('SIGTERM')
      const [code] = await exited
      expect(code).toBe(0)
      expect(performance.now() - started).toBeLessThan(5000)
      await server.stop()
    })
  }
})

/**
 * `simulate`'s answers are what the receiver's store decided, not what was sent:
 * on the memory store every replay is a `duplicate`; on the Postgres store a
 * replay of an event its conversion has moved past is `stale`, so `duplicate` is
 * fewer than the replays, and the summary says why in a `note:` line. The built
 * CLI as a process, real receivers on loopback, a real Postgres database.
 */
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type EventStore, memoryStore } from '@affiliate-webhooks/core'
import { affiliateWebhook } from '@affiliate-webhooks/node'
import { postgresStore } from '@affiliate-webhooks/postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLI } from '../support/cli-live.js'
import { createPostgresTestDatabase, type TestDatabase } from '../support/postgres-db.js'
import { run } from '../support/run-process.js'

const SECRET = 'whsec_simulate_counts_test'
const servers: Server[] = []
let db: TestDatabase
beforeAll(async () => {
  db = await createPostgresTestDatabase()
})
afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
  await db?.drop()
})

async function receiver(store: EventStore<unknown>): Promise<string> {
  const server = createServer(
    affiliateWebhook({ path: '/hooks', secret: SECRET, store, logger: false, onConversion() {} }),
  )
  servers.push(server)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`
}

const simulate = (url: string, json: boolean) =>
  run(process.execPath, [
    CLI,
    'simulate',
    '--url',
    url,
    '--secret',
    SECRET,
    '--conversions',
    '40',
    '--duplicates',
    '0.4',
    '--reorder',
    '0',
    '--seed',
    '51',
    ...(json ? ['--json'] : []),
  ])

const NOTE =
  /^note: (\d+) replays, (\d+) answered duplicate: the answers are what the receiver's store decided, not what was sent\. A replay of an event its conversion has moved past is stale on the SQL stores/m

describe('simulate: replays and the answers they got, by store', () => {
  it('memory store: every replay is a duplicate, and no note', async () => {
    const url = await receiver(memoryStore())
    const text = await simulate(url, false)
    expect(text.code).toBe(0)
    expect(text.stdout).not.toMatch(NOTE)
    const stats = JSON.parse((await simulate(await receiver(memoryStore()), true)).stdout)
    expect(stats.replays).toBeGreaterThan(0)
    expect(stats.outcomes.duplicate).toBe(stats.replays)
  })

  it('Postgres store: replays of events their conversion moved past are stale, and the note says so', async () => {
    const url = await receiver(
      postgresStore({ pool: db.pool, logger: false }) as EventStore<unknown>,
    )
    const stats = JSON.parse((await simulate(url, true)).stdout)
    expect(stats.replays).toBeGreaterThan(0)
    expect(stats.outcomes.stale).toBeGreaterThan(0)
    expect(stats.outcomes.duplicate ?? 0).toBeLessThan(stats.replays)
    // A second run on a fresh prefix would be the same; the text run is its own.
    const text = await simulate(
      await receiver(
        postgresStore({
          pool: db.pool,
          tablePrefix: 'aw_text_',
          logger: false,
        }) as EventStore<unknown>,
      ),
      false,
    )
    expect(text.code).toBe(0)
    const [, replays, duplicates] = NOTE.exec(text.stdout) ?? []
    expect(Number(replays)).toBeGreaterThan(Number(duplicates))
  })
})

/**
 * The crash this store exists for: a receiver process whose handler has written
 * its effect and not returned is SIGKILLed; the service's retry reaches a new
 * process. With a SQL store the effect was in the store's transaction, which the
 * database rolled back when the connection died: exactly one effect row. With the
 * Redis store the effect had committed on its own and the mark never did: two
 * rows, which is why its handlers must be idempotent.
 */
import { randomUUID } from 'node:crypto'
import { buildConversionEvent } from '@affiliate-webhooks/core/testing'
import { afterAll, describe, expect, it } from 'vitest'
import {
  deliver,
  deliverUntilAcknowledged,
  type EffectsDatabase,
  postgresKind,
  type ReceiverProcess,
  SQL_KINDS,
  type SqlKind,
  startReceiver,
} from './sql-stores.js'

const cases: { kind: SqlKind; store: string; effects: number }[] = [
  ...SQL_KINDS.map((kind) => ({ kind, store: kind.name, effects: 1 })),
  { kind: postgresKind, store: 'redis', effects: 2 },
]

describe.each(cases)(
  'a receiver SIGKILLed mid-handler, $store store',
  ({ kind, store, effects }) => {
    const started: ReceiverProcess[] = []
    let db: EffectsDatabase | undefined
    afterAll(async () => {
      for (const process of started) await process.kill()
      await db?.drop()
    })

    it(`leaves ${effects === 1 ? 'exactly one effect row' : 'two effect rows'} after the retry`, async () => {
      db = await kind.createDatabase()
      const env = {
        ...kind.env,
        STORE: store === 'redis' ? 'redis' : kind.store,
        DATABASE_URL: db.url,
        KEY_PREFIX: `aw-crash-${randomUUID().slice(0, 8)}:`,
        LEASE_MS: '1000',
      }
      const first = await startReceiver({ ...env, AFTER_FIRST_EFFECT: 'hang' })
      started.push(first)
      const event = buildConversionEvent({ conversion: { id: 4242, status: 'approved' } })
      const hung = deliver(first.url, event, 1)
      expect(await first.effect).toBe(event.id)
      await first.kill()
      // No answer (killed first), or 503 handler_timeout (answerWithinMs, half the
      // 1 s lease, came first): never a 2xx.
      expect([0, 503]).toContain(await hung)

      const second = await startReceiver(env)
      started.push(second)
      const statuses = await deliverUntilAcknowledged(() => second.url, event)
      expect(statuses.at(-1)).toBe(200)
      const rows = await db.rows<{ pid: number }>('SELECT pid FROM effects WHERE event_id = $1', [
        event.id,
      ])
      expect(rows.length).toBe(effects)
      expect(rows.some((row) => row.pid === second.pid)).toBe(true)
      // A further delivery of the event is a duplicate, whichever store.
      expect(await deliver(second.url, event, 3)).toBe(200)
      expect(
        (await db.rows('SELECT pid FROM effects WHERE event_id = $1', [event.id])).length,
      ).toBe(effects)
    })
  },
)

describe.each(SQL_KINDS)(
  'a receiver whose handler throws after its effect, $name store',
  (kind) => {
    let receiver: ReceiverProcess | undefined
    let db: EffectsDatabase | undefined
    afterAll(async () => {
      await receiver?.kill()
      await db?.drop()
    })

    it('leaves no effect row; its retry leaves one', async () => {
      db = await kind.createDatabase()
      receiver = await startReceiver({
        ...kind.env,
        STORE: kind.store,
        DATABASE_URL: db.url,
        AFTER_FIRST_EFFECT: 'throw',
      })
      const event = buildConversionEvent({ conversion: { id: 4343 } })
      expect(await deliver(receiver.url, event, 1)).toBe(500)
      expect(await receiver.effect).toBe(event.id)
      expect(await db.rows('SELECT pid FROM effects WHERE event_id = $1', [event.id])).toEqual([])
      expect(await deliver(receiver.url, event, 2)).toBe(200)
      expect(
        (await db.rows('SELECT pid FROM effects WHERE event_id = $1', [event.id])).length,
      ).toBe(1)
    })
  },
)

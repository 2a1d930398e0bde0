/**
 * What a handler may do wrong with ctx.tx on PostgreSQL, under a real receiver,
 * on both drivers (pg, postgres.js): checked by reading the database. No
 * delivery is answered 2xx without its rows, no row is written twice, and what
 * the handler did wrong is answered 500 handler_failed, never 503.
 */
import { randomUUID } from 'node:crypto'
import { createReceiver, type EventStore } from '@affiliate-webhooks/core'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import { beforeAll, describe, expect, it } from 'vitest'

export interface PostgresMisuseSetup<Tx> {
  /** A store whose pool has room for `max` connections only. */
  store(max: number): EventStore<Tx>
  /** One statement on ctx.tx, `$1` placeholders, in this driver's idiom. */
  query(tx: Tx, text: string, params?: unknown[]): Promise<unknown>
  /** Rows of a query on the test database (outside any delivery). */
  rows<T>(text: string, params?: unknown[]): Promise<T[]>
}

const SECRET = 'whsec_postgres_misuse'

async function deliver(receiver: ReturnType<typeof createReceiver>, event: object) {
  const signed = await signedDelivery({ secret: SECRET, event })
  return receiver.receive({
    headers: signed.headers,
    rawBody: new TextEncoder().encode(signed.body),
  })
}

function gate() {
  let open!: () => void
  const opened = new Promise<void>((resolve) => {
    open = resolve
  })
  return { open, opened }
}

/** The handler's misdeeds, by name: each writes its ledger row first. */
type Kind = 'good' | 'commit' | 'rollback_caught' | 'caught_error' | 'savepoint_left' | 'throws'

export function postgresMisuseCases<Tx>(name: string, setup: PostgresMisuseSetup<Tx>): void {
  describe(`${name}: a handler that misuses ctx.tx`, () => {
    const table = `misuse_${randomUUID().slice(0, 8)}`
    // No key: a row written twice shows as two.
    beforeAll(() =>
      setup.rows(`CREATE TABLE ${table} (id bigserial PRIMARY KEY, event_id text NOT NULL)`),
    )
    const rowsOf = async (eventId: string) =>
      Number(
        (
          await setup.rows<{ n: string }>(
            `SELECT count(*) AS n FROM ${table} WHERE event_id = $1`,
            [eventId],
          )
        )[0]?.n,
      )
    const insert = (tx: Tx, eventId: string) =>
      setup.query(tx, `INSERT INTO ${table} (event_id) VALUES ($1)`, [eventId])

    it('catches a deadlock and goes on: 500 handler_failed, nothing of it committed; the other delivery commits', async () => {
      const locks = `locks_${randomUUID().slice(0, 8)}`
      await setup.rows(
        `CREATE TABLE ${locks} (id int PRIMARY KEY); INSERT INTO ${locks} VALUES (1), (2)`,
      )
      const both = [gate(), gate()]
      let caught: unknown
      const receiver = createReceiver({
        secret: SECRET,
        logger: false,
        store: setup.store(4),
        async onConversion(conversion, event, ctx) {
          const [mine, theirs] = conversion.id === 80_001 ? [1, 2] : [2, 1]
          const tx = ctx.tx as Tx
          await insert(tx, event.id)
          await setup.query(tx, `UPDATE ${locks} SET id = id WHERE id = ${mine}`)
          both[mine - 1]?.open()
          await both[theirs - 1]?.opened
          try {
            await setup.query(tx, `UPDATE ${locks} SET id = id WHERE id = ${theirs}`)
          } catch (error) {
            // The common retry pattern: caught, and the write done again.
            caught = error
            await insert(tx, event.id).catch(() => {})
          }
        },
      })
      // The conversion ids decide the lock order: 80001 takes 1 then 2, 80002 the reverse.
      const e1 = buildConversionEvent({ conversion: { id: 80_001 } })
      const e2 = buildConversionEvent({ conversion: { id: 80_002 } })
      const answers = await Promise.all([deliver(receiver, e1), deliver(receiver, e2)])
      expect((caught as { code?: string }).code).toBe('40P01')
      const seen = await Promise.all(
        [e1, e2].map(async (e, i) => [
          answers[i]?.status,
          answers[i]?.error?.code,
          await rowsOf(e.id),
        ]),
      )
      expect(seen.sort((a, b) => Number(a[0]) - Number(b[0]))).toEqual([
        [200, undefined, 1],
        [500, 'handler_failed', 0],
      ])
    }, 20_000)

    it('catches a serialization failure (SQLSTATE 40001) and goes on: 500 handler_failed, nothing committed', async () => {
      const receiver = createReceiver({
        secret: SECRET,
        logger: false,
        store: setup.store(4),
        async onConversion(_conversion, event, ctx) {
          const tx = ctx.tx as Tx
          await insert(tx, event.id)
          await setup
            .query(
              tx,
              `DO $$BEGIN RAISE EXCEPTION 'could not serialize' USING ERRCODE = '40001'; END$$`,
            )
            .catch(() => {})
          await insert(tx, event.id).catch(() => {})
        },
      })
      const event = buildConversionEvent({ conversion: { id: 81_001 } })
      const answer = await deliver(receiver, event)
      expect([answer.status, answer.error?.code]).toEqual([500, 'handler_failed'])
      expect(answer.error?.message).toMatch(/went on.*nothing it wrote was kept/s)
      expect(await rowsOf(event.id)).toBe(0)
    })

    it('leaves a savepoint open: it commits with the transaction (200, one row)', async () => {
      const receiver = createReceiver({
        secret: SECRET,
        logger: false,
        store: setup.store(4),
        async onConversion(_conversion, event, ctx) {
          const tx = ctx.tx as Tx
          await setup.query(tx, 'SAVEPOINT left_open')
          await insert(tx, event.id)
        },
      })
      const event = buildConversionEvent({ conversion: { id: 82_001 } })
      expect((await deliver(receiver, event)).outcome).toBe('processed')
      expect(await rowsOf(event.id)).toBe(1)
    })

    it('interleaves misbehaving and well-behaved deliveries on a pool of 3: no 2xx without its row, no row twice', async () => {
      const kinds: Kind[] = ['good', 'commit', 'good', 'rollback_caught', 'caught_error', 'good']
      kinds.push('savepoint_left', 'throws', 'good')
      const runs = new Map<string, number>()
      const receiver = createReceiver({
        secret: SECRET,
        logger: false,
        store: setup.store(3),
        async onConversion(conversion, event, ctx) {
          runs.set(event.id, (runs.get(event.id) ?? 0) + 1)
          const tx = ctx.tx as Tx
          const kind = kinds[conversion.id % kinds.length] as Kind
          if (kind === 'savepoint_left') await setup.query(tx, 'SAVEPOINT s')
          await insert(tx, event.id)
          await new Promise((resolve) => setTimeout(resolve, conversion.id % 3))
          if (kind === 'commit') await setup.query(tx, 'COMMIT')
          if (kind === 'rollback_caught') await setup.query(tx, 'ROLLBACK').catch(() => {})
          if (kind === 'caught_error') await setup.query(tx, 'SELECT 1/0').catch(() => {})
          if (kind === 'throws') throw new Error('the handler failed')
        },
      })
      const events = Array.from({ length: 60 }, (_, i) =>
        buildConversionEvent({ conversion: { id: 83_000 + i } }),
      )
      const answers = await Promise.all(
        events.map(async (event) => {
          const seen: number[] = []
          // Retried as the service would, a few times, until a 2xx.
          for (let attempt = 0; attempt < 4; attempt++) {
            const answer = await deliver(receiver, event)
            seen.push(answer.status)
            if (answer.status < 300) break
          }
          return seen
        }),
      )
      const wrong: string[] = []
      for (const [i, event] of events.entries()) {
        const kind = kinds[(83_000 + i) % kinds.length] as Kind
        const statuses = answers[i] as number[]
        const acknowledged = statuses.some((status) => status < 300)
        const rows = await rowsOf(event.id)
        const expected = ['good', 'rollback_caught', 'savepoint_left'].includes(kind)
        if (rows !== (acknowledged ? 1 : 0) || acknowledged !== expected) {
          wrong.push(`${kind} ${event.id}: ${statuses.join(',')} -> ${rows} row(s)`)
        }
        // Misdeeds are the handler's: 500, never 503 (the store's).
        if (!expected && statuses.some((status) => status !== 500)) {
          wrong.push(`${kind} ${event.id}: answered ${statuses.join(',')}`)
        }
        if (expected && runs.get(event.id) !== 1) {
          wrong.push(`${kind} ${event.id}: the handler ran ${runs.get(event.id)} times`)
        }
      }
      expect(wrong).toEqual([])
    }, 60_000)
  })
}

/**
 * The cases every SQL store passes under a real receiver, effects written
 * through ctx.tx: one list, run by the test file of every SQL store and driver.
 */
import { randomUUID } from 'node:crypto'
import { createReceiver, type EventStore } from '@affiliate-webhooks/core'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import { beforeAll, describe, expect, it, vi } from 'vitest'

export interface SqlReceiverSetup<Tx = unknown> {
  /** A store on the test database, with these timings. */
  store(options?: { lockWaitMs?: number }): EventStore<Tx>
  /** Runs one statement of the handler on ctx.tx, in this driver's idiom. */
  query(tx: Tx, sql: string, params?: unknown[]): Promise<unknown>
  /** Runs a statement on the test database, `?` placeholders. */
  exec(sql: string, params?: unknown[]): Promise<void>
  /** COUNT(*) of a query, `?` placeholders. */
  count(sql: string, params?: unknown[]): Promise<number>
  /** The ledger's DDL for this table name. */
  ledgerDdl(table: string): string
  /** The INSERT with three `?`, in this driver's placeholder style. */
  insertSql(table: string): string
  /** What a handler does that leaves its transaction unable to commit, and how it is put. */
  spoil: { title: string; run(tx: Tx): Promise<void>; status: number; code: string }
}

const SECRET = 'whsec_sql_receiver_cases'

async function delivery(event: object) {
  const signed = await signedDelivery({ secret: SECRET, event })
  return { headers: signed.headers, rawBody: new TextEncoder().encode(signed.body) }
}

/** A promise and the function that settles it. */
function gate() {
  let open!: () => void
  const opened = new Promise<void>((resolve) => {
    open = resolve
  })
  return { open, opened }
}

export function sqlReceiverCases<Tx>(name: string, setup: SqlReceiverSetup<Tx>): void {
  describe(`${name} with a receiver: effects through ctx.tx`, () => {
    const table = `ledger_${randomUUID().slice(0, 8)}`
    const insert = setup.insertSql(table)
    beforeAll(() => setup.exec(setup.ledgerDdl(table)))
    const effects = (eventId: string) =>
      setup.count(`SELECT COUNT(*) AS n FROM ${table} WHERE event_id = ?`, [eventId])

    it('commits the handler writes with the handled mark; a redelivery is a duplicate', async () => {
      const receiver = createReceiver({
        secret: SECRET,
        store: setup.store(),
        async onConversion(conversion, event, ctx) {
          await setup.query(ctx.tx as Tx, insert, [event.id, conversion.id, conversion.commission])
        },
      })
      const event = buildConversionEvent({ conversion: { id: 71, commission: '4.20' } })
      expect((await receiver.receive(await delivery(event))).outcome).toBe('processed')
      expect((await receiver.receive(await delivery(event))).outcome).toBe('duplicate')
      expect(await effects(event.id)).toBe(1)
    })

    it('rolls back the writes of a handler that throws (500), and its retry leaves one row', async () => {
      let fail = true
      const receiver = createReceiver({
        secret: SECRET,
        logger: false,
        store: setup.store(),
        async onConversion(conversion, event, ctx) {
          await setup.query(ctx.tx as Tx, insert, [event.id, conversion.id, conversion.commission])
          if (fail) throw new Error('downstream failed after the insert')
        },
      })
      const event = buildConversionEvent({ conversion: { id: 72 } })
      expect((await receiver.receive(await delivery(event))).status).toBe(500)
      expect(await effects(event.id)).toBe(0)
      fail = false
      expect((await receiver.receive(await delivery(event))).outcome).toBe('processed')
      expect(await effects(event.id)).toBe(1)
    })

    it(`never answers 2xx when the handler ${setup.spoil.title}: nothing is marked`, async () => {
      const receiver = createReceiver({
        secret: SECRET,
        logger: false,
        store: setup.store(),
        async onConversion(_conversion, event, ctx) {
          await setup.query(ctx.tx as Tx, insert, [event.id, 1, 1])
          await setup.spoil.run(ctx.tx as Tx)
        },
      })
      const event = buildConversionEvent({ conversion: { id: 73 } })
      const first = await receiver.receive(await delivery(event))
      expect([first.status, first.error?.code]).toEqual([setup.spoil.status, setup.spoil.code])
      expect(await effects(event.id)).toBe(0)
      // Not marked handled: the retry runs the handler again.
      expect((await receiver.receive(await delivery(event))).status).toBe(setup.spoil.status)
    })

    it('answers a second delivery of an event whose transaction is open 409 within lockWaitMs', async () => {
      const entered = gate()
      const held = gate()
      const lockWaitMs = 1000
      const receiver = createReceiver({
        secret: SECRET,
        logger: false,
        store: setup.store({ lockWaitMs }),
        async onConversion() {
          entered.open()
          await held.opened
        },
      })
      const event = buildConversionEvent({ conversion: { id: 74 } })
      const first = receiver.receive(await delivery(event))
      await entered.opened
      const started = performance.now()
      const second = await receiver.receive(await delivery(event))
      const waited = performance.now() - started
      expect([second.status, second.error?.code]).toEqual([409, 'event_in_progress'])
      // It waited on the first delivery's row for lockWaitMs, then gave up: the first
      // never ends here, so without the bound it would wait for the test's timeout.
      // (The upper bound is the claim; its margin is for a loaded CI machine.)
      expect(waited).toBeGreaterThanOrEqual(lockWaitMs - 50)
      expect(waited).toBeLessThan(lockWaitMs + 4000)
      held.open()
      expect((await first).outcome).toBe('processed')
    })

    it('answers a handler still running at answerWithinMs 503 handler_timeout, never 2xx; copies 409 while its transaction is open, duplicate once it commits', async () => {
      const held = gate()
      let calls = 0
      const receiver = createReceiver({
        secret: SECRET,
        logger: false,
        answerWithinMs: 200,
        leaseMs: 5_000,
        store: setup.store({ lockWaitMs: 100 }),
        async onConversion(conversion, event, ctx) {
          calls++
          await setup.query(ctx.tx as Tx, insert, [event.id, conversion.id, 1])
          await held.opened
        },
      })
      const event = buildConversionEvent({ conversion: { id: 77_001 } })
      const first = await receiver.receive(await delivery(event))
      expect([first.status, first.error?.code]).toEqual([503, 'handler_timeout'])
      // The claim is the open transaction: a copy waits lockWaitMs on its row, then 409.
      const copy = await receiver.receive(await delivery(event))
      expect([copy.status, copy.error?.code]).toEqual([409, 'event_in_progress'])
      held.open()
      await vi.waitFor(async () => {
        expect((await receiver.receive(await delivery(event))).outcome).toBe('duplicate')
      })
      expect(calls).toBe(1)
      expect(await effects(event.id)).toBe(1)
    })

    it('ends a hung handler transaction at the lease: its locks go, the retry runs, the late commit is not acknowledged', async () => {
      const hang = gate()
      let calls = 0
      const receiver = createReceiver({
        secret: SECRET,
        logger: false,
        leaseMs: 300,
        store: setup.store(),
        async onConversion(conversion, event, ctx) {
          calls++
          await setup.query(ctx.tx as Tx, insert, [event.id, conversion.id, 1])
          if (calls === 1) await hang.opened
        },
      })
      const event = buildConversionEvent({ conversion: { id: 75 } })
      const hung = receiver.receive(await delivery(event))
      await vi.waitFor(() => expect(calls).toBe(1))
      // The service's retries, until one has run: 409 while the hung run holds the
      // event, a 503 while one waits past answerWithinMs (half this short lease) for
      // its locks or meets a connection the lease's end closed; then processed, or
      // duplicate when the retry answered 503 committed after its answer.
      await vi.waitFor(
        async () =>
          expect(['processed', 'duplicate']).toContain(
            (await receiver.receive(await delivery(event))).outcome,
          ),
        { timeout: 10_000, interval: 100 },
      )
      expect(calls).toBeGreaterThanOrEqual(2)
      hang.open()
      expect((await hung).status).toBe(503)
      expect(await effects(event.id)).toBe(1)
    })

    it('ends a busy handler at the lease too: one that keeps querying past it commits nothing', async () => {
      let calls = 0
      const receiver = createReceiver({
        secret: SECRET,
        logger: false,
        leaseMs: 400,
        store: setup.store(),
        async onConversion(conversion, event, ctx) {
          calls++
          await setup.query(ctx.tx as Tx, insert, [event.id, conversion.id, 1])
          // Never idle for long, never one long statement: only the lease as a whole bounds it.
          for (let i = 0; calls === 1 && i < 12; i++) {
            await new Promise((resolve) => setTimeout(resolve, 100))
            await setup.query(ctx.tx as Tx, 'SELECT 1')
          }
        },
      })
      const event = buildConversionEvent({ conversion: { id: 76_001 } })
      // Answered at answerWithinMs (half the lease), while the handler goes on.
      expect((await receiver.receive(await delivery(event))).status).toBeGreaterThanOrEqual(500)
      // Once the lease has ended its transaction, a retry runs it again (and may
      // itself be answered 503 while it waits for the first one's locks to go).
      await vi.waitFor(
        async () =>
          expect(['processed', 'duplicate']).toContain(
            (await receiver.receive(await delivery(event))).outcome,
          ),
        { timeout: 5_000, interval: 100 },
      )
      // The first run's row was rolled back with its transaction: only the retry's is left.
      expect(calls).toBe(2)
      expect(await effects(event.id)).toBe(1)
    })
  })
}

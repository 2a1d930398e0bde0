/**
 * The misuse suite of the SQL stores: handlers that do what a handler should
 * not with ctx.tx (end its transaction, start another, run DDL that commits,
 * catch a failure that ended the transaction and go on, throw after any of
 * these, never settle), alone and interleaved with well-behaved deliveries on
 * the same pool. Whatever the handler does, checked by reading the database:
 * no event answered 2xx without its effects, no effect committed twice, no
 * event of a conversion applied while an earlier one of it still runs, and
 * every refused statement fails at once with an error saying what to do.
 */
import { randomUUID } from 'node:crypto'
import { createReceiver, type EventStore, type ReceiveResult } from '@affiliate-webhooks/core'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'

/** One driver of one SQL store, as the misuse suite drives it. */
export interface MisuseDriver {
  name: string
  /** Opens the test database and the driver's pool (or connection). */
  open(): Promise<MisuseDatabase>
}

export interface MisuseDatabase {
  /** A store on the driver's pool, with these timings. */
  store(options: { lockWaitMs?: number }): EventStore<unknown>
  /** Runs one statement of the handler on ctx.tx, `?` placeholders, in this driver's idiom. */
  query(tx: unknown, sql: string, params?: unknown[]): Promise<unknown>
  /** Sends a text without parameters through ctx.tx as a handler would (simple query, exec, raw). */
  raw(tx: unknown, sql: string): Promise<unknown>
  /** The driver's own way to start a transaction on ctx.tx, when it has one (mysql2's beginTransaction). */
  driverBegin?(tx: unknown): Promise<unknown>
  /** Runs a statement on the test database outside any delivery, `?` placeholders. */
  exec(sql: string, params?: unknown[]): Promise<void>
  /** Rows of a query on the test database, `?` placeholders. */
  rows<T>(sql: string, params?: unknown[]): Promise<T[]>
  /** The DDL of an effects table: event_id, attempt, step (text), conversion_id, event_order. */
  ledgerDdl(table: string): string
  /** The statement a handler runs whose failure leaves the transaction gone or aborted (the handler catches it). */
  endsTransaction: { title: string; run(tx: unknown, table: string): Promise<void> }
  /** Whether DDL commits implicitly (MySQL, MariaDB): then it is refused; elsewhere it is part of the transaction. */
  ddlCommits: boolean
  /** Legitimate texts an earlier statement reader refused on this database: they must go through. */
  notRefused: readonly string[]
  close(): Promise<void>
}

const SECRET = 'whsec_sql_misuse_cases'

async function delivery(event: object, attempt = 1) {
  const signed = await signedDelivery({ secret: SECRET, event, attempt })
  return { headers: signed.headers, rawBody: new TextEncoder().encode(signed.body) }
}

const acknowledged = (result: ReceiveResult) => result.status >= 200 && result.status < 300

/** The statements every driver refuses on ctx.tx, and what each is. */
const ALWAYS_REFUSED = [
  'COMMIT',
  'ROLLBACK',
  'BEGIN',
  'START TRANSACTION',
  'SELECT 1; COMMIT',
  '/* done */ commit',
]

/** A refused statement: fails before it reaches the server, with the code and a remedy. */
async function expectRefused(send: () => Promise<unknown>, statement: string): Promise<void> {
  const started = performance.now()
  const error = await send().then(
    () => undefined,
    (e: unknown) => e as Error & { code?: string },
  )
  expect(error, `${statement} was not refused`).toBeInstanceOf(Error)
  expect(error?.code, `${statement}: ${error?.message}`).toBe('ERR_AW_TX_CONTROL')
  expect(error?.message).toMatch(/ctx\.tx refused .*Let the store commit/)
  // At once: no round trip to the server (the bound is for a loaded machine).
  expect(performance.now() - started).toBeLessThan(1000)
}

/** What a handler does on its attempt, by name. */
type Misuse = (db: MisuseDatabase, tx: unknown, table: string) => Promise<unknown>

/** The misuses of one driver, each done once, caught, and followed by more writes. */
function misuses(db: MisuseDatabase): Record<string, Misuse> {
  const list: Record<string, Misuse> = {}
  for (const statement of ALWAYS_REFUSED) {
    list[`sends ${statement}`] = (d, tx) => d.raw(tx, statement)
  }
  list['ends its transaction on the server (caught)'] = (d, tx, table) =>
    d.endsTransaction.run(tx, table)
  list['leaves a savepoint open'] = (d, tx) => d.raw(tx, 'SAVEPOINT left_open')
  if (db.ddlCommits) {
    list['runs DDL that commits implicitly'] = (d, tx) =>
      d.raw(tx, 'CREATE TABLE IF NOT EXISTS misuse_ddl (id INT)')
    list['locks tables'] = (d, tx, table) => d.raw(tx, `LOCK TABLES ${table} WRITE`)
  }
  if (db.driverBegin !== undefined) {
    const begin = db.driverBegin.bind(db)
    list["starts a transaction with the driver's own begin"] = (_d, tx) => begin(tx)
  }
  return list
}

export function sqlMisuseCases(driver: MisuseDriver): void {
  describe(`${driver.name}: a handler that misuses ctx.tx`, () => {
    let db: MisuseDatabase
    const table = `misuse_${randomUUID().slice(0, 8)}`
    beforeAll(async () => {
      db = await driver.open()
      await db.exec(db.ledgerDdl(table))
    })
    afterAll(async () => {
      await db?.close()
    })
    const insert = (tx: unknown, eventId: string, attempt: number, step: string) =>
      db.query(tx, `INSERT INTO ${table} (event_id, attempt, step) VALUES (?, ?, ?)`, [
        eventId,
        attempt,
        step,
      ])
    const stepsOf = async (eventId: string) =>
      (
        await db.rows<{ attempt: number; step: string }>(
          `SELECT attempt, step FROM ${table} WHERE event_id = ? ORDER BY attempt, step`,
          [eventId],
        )
      ).map((row) => `${Number(row.attempt)}:${row.step}`)

    it('refuses, at once and without touching the transaction, each statement that would end or split it; the handler that lets the error go is answered 500 and its writes are rolled back', async () => {
      const refused = [...ALWAYS_REFUSED]
      if (db.ddlCommits) refused.push('CREATE TABLE misuse_refused (id INT)', 'UNLOCK TABLES')
      for (const statement of refused) {
        let attempt = 0
        const receiver = createReceiver({
          secret: SECRET,
          logger: false,
          store: db.store({}),
          async onConversion(_conversion, event, ctx) {
            attempt++
            await insert(ctx.tx, event.id, attempt, 'before')
            if (attempt === 1) await expectRefused(() => db.raw(ctx.tx, statement), statement)
            if (attempt === 2) await db.raw(ctx.tx, statement)
            await insert(ctx.tx, event.id, attempt, 'after')
          },
        })
        const event = buildConversionEvent()
        // Caught by the handler: the transaction is untouched and commits whole.
        expect((await receiver.receive(await delivery(event))).outcome).toBe('processed')
        expect(await stepsOf(event.id)).toEqual(['1:after', '1:before'])
        // Not caught: a handler failure, nothing of it committed.
        const other = buildConversionEvent()
        attempt = 1
        const failed = await receiver.receive(await delivery(other))
        expect([failed.status, failed.error?.code]).toEqual([500, 'handler_failed'])
        expect(await stepsOf(other.id)).toEqual([])
      }
    })

    it('answers a handler that ends its transaction on the server and goes on 500 handler_failed, commits nothing of it, and its retry once', async () => {
      let attempt = 0
      const receiver = createReceiver({
        secret: SECRET,
        logger: false,
        store: db.store({}),
        async onConversion(_conversion, event, ctx) {
          attempt++
          await insert(ctx.tx, event.id, attempt, 'before')
          if (attempt === 1) {
            await db.endsTransaction.run(ctx.tx, table).catch(() => {})
            // The common retry pattern: do it again after the failure, and go on.
            await insert(ctx.tx, event.id, attempt, 'retry').catch(() => {})
          }
          await insert(ctx.tx, event.id, attempt, 'after').catch((error: unknown) => {
            if (attempt > 1) throw error
          })
        },
      })
      const event = buildConversionEvent()
      const first = await receiver.receive(await delivery(event))
      expect([first.status, first.error?.code], first.error?.message).toEqual([
        500,
        'handler_failed',
      ])
      expect(await stepsOf(event.id)).toEqual([])
      expect((await receiver.receive(await delivery(event, 2))).outcome).toBe('processed')
      expect(await stepsOf(event.id)).toEqual(['2:after', '2:before'])
      expect((await receiver.receive(await delivery(event, 3))).outcome).toBe('duplicate')
    })

    it('lets through what looks like transaction control and is not (a user variable, a comment), and commits it', async () => {
      for (const statement of db.notRefused) {
        const receiver = createReceiver({
          secret: SECRET,
          logger: false,
          store: db.store({}),
          async onConversion(_conversion, event, ctx) {
            await insert(ctx.tx, event.id, 1, 'before')
            await db.raw(ctx.tx, statement)
            await insert(ctx.tx, event.id, 1, 'after')
          },
        })
        const event = buildConversionEvent()
        const answer = await receiver.receive(await delivery(event))
        expect(answer.outcome, `${statement}: ${answer.error?.message}`).toBe('processed')
        expect(await stepsOf(event.id)).toEqual(['1:after', '1:before'])
      }
    })

    it('commits with a savepoint the handler left open', async () => {
      const receiver = createReceiver({
        secret: SECRET,
        logger: false,
        store: db.store({}),
        async onConversion(_conversion, event, ctx) {
          await insert(ctx.tx, event.id, 1, 'before')
          await db.raw(ctx.tx, 'SAVEPOINT left_open')
          await insert(ctx.tx, event.id, 1, 'after')
        },
      })
      const event = buildConversionEvent()
      expect((await receiver.receive(await delivery(event))).outcome).toBe('processed')
      expect(await stepsOf(event.id)).toEqual(['1:after', '1:before'])
    })

    it('keeps the conversion locked while a handler that tried to end its transaction still runs: a newer event and a copy get 409', async () => {
      const statement = db.ddlCommits ? 'CREATE TABLE IF NOT EXISTS misuse_x (id INT)' : 'COMMIT'
      let entered!: () => void
      const inside = new Promise<void>((resolve) => {
        entered = resolve
      })
      let finish!: () => void
      const finished = new Promise<void>((resolve) => {
        finish = resolve
      })
      const conversion = { id: 4_000_000 + Math.floor(Math.random() * 1e6) }
      const older = buildConversionEvent({ createdAt: 1_000, conversion })
      const receiver = createReceiver({
        secret: SECRET,
        logger: false,
        store: db.store({ lockWaitMs: 300 }),
        async onConversion(_conversion, event, ctx) {
          await insert(ctx.tx, event.id, 1, 'before')
          if (event.id === older.id) {
            await db.raw(ctx.tx, statement).catch(() => {})
            entered()
            await finished
          }
        },
      })
      const running = receiver.receive(await delivery(older))
      try {
        await inside
        const newer = buildConversionEvent({
          type: 'conversion.updated',
          createdAt: 2_000,
          conversion,
        })
        const blocked = await receiver.receive(await delivery(newer))
        expect([blocked.status, blocked.error?.code]).toEqual([409, 'event_in_progress'])
        const copy = await receiver.receive(await delivery(older, 2))
        expect([copy.status, copy.error?.code]).toEqual([409, 'event_in_progress'])
        expect(await stepsOf(older.id)).toEqual([])
        finish()
        expect((await running).outcome).toBe('processed')
        expect((await receiver.receive(await delivery(newer, 2))).outcome).toBe('processed')
        expect(await stepsOf(newer.id)).toEqual(['1:before'])
      } finally {
        // A failed expectation must not leave the handler holding its connection.
        finish()
        await running
      }
      expect(await stepsOf(older.id)).toEqual(['1:before'])
    })

    it('answers a handler that never settles 503, and lets the retry run once its lease ends: its writes are never committed', async () => {
      let attempt = 0
      const receiver = createReceiver({
        secret: SECRET,
        logger: false,
        leaseMs: 600,
        store: db.store({ lockWaitMs: 100 }),
        async onConversion(_conversion, event, ctx) {
          attempt++
          const mine = attempt
          await insert(ctx.tx, event.id, mine, 'before')
          if (mine === 1) await new Promise(() => {})
        },
      })
      const event = buildConversionEvent()
      const first = await receiver.receive(await delivery(event))
      expect([first.status, first.error?.code]).toEqual([503, 'handler_timeout'])
      await vi.waitFor(
        async () => {
          const again = await receiver.receive(await delivery(event, 2))
          expect(['processed', 'duplicate']).toContain(again.outcome)
        },
        { timeout: 10_000, interval: 150 },
      )
      const steps = await stepsOf(event.id)
      expect(steps).toHaveLength(1)
      expect(steps[0]).not.toBe('1:before')
    })

    it('keeps every promise with misusing and well-behaved deliveries interleaved on one pool, each retried until 2xx', async () => {
      const kinds = misuses(db)
      const names = Object.keys(kinds)
      // A conversion each: two events of one conversion would make the older one's
      // retry stale (no effects), which is right but not what this case counts.
      const base = 5_000_000 + 100 * Math.floor(Math.random() * 10_000)
      const events = Array.from({ length: 3 * names.length + 12 }, (_, i) => ({
        event: buildConversionEvent({
          createdAt: 1_000 + i,
          conversion: { id: base + i },
        }),
        misuse: i < 3 * names.length ? names[i % names.length] : undefined,
        attempts: 0,
      }))
      const byId = new Map(events.map((entry) => [entry.event.id, entry]))
      const receiver = createReceiver({
        secret: SECRET,
        logger: false,
        store: db.store({ lockWaitMs: 200 }),
        async onConversion(_conversion, event, ctx) {
          const entry = byId.get(event.id) as (typeof events)[number]
          const attempt = ++entry.attempts
          await insert(ctx.tx, event.id, attempt, 'before')
          const misuse = entry.misuse === undefined ? undefined : kinds[entry.misuse]
          if (misuse !== undefined && attempt === 1) {
            await misuse(db, ctx.tx, table).catch(() => {})
            // A handler that fails after its misuse, for one in three of them.
            if (events.indexOf(entry) % 3 === 2) throw new Error('failed after the misuse')
          }
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 5))
          await insert(ctx.tx, event.id, attempt, 'after')
        },
      })
      const answers = new Map<string, ReceiveResult[]>()
      await Promise.all(
        events.map(async ({ event }) => {
          const seen: ReceiveResult[] = []
          answers.set(event.id, seen)
          for (let n = 1; n <= 40; n++) {
            const result = await receiver.receive(await delivery(event, Math.min(n, 8)))
            seen.push(result)
            if (acknowledged(result)) return
            await new Promise((resolve) => setTimeout(resolve, 20))
          }
        }),
      )
      for (const { event, misuse } of events) {
        const seen = answers.get(event.id) ?? []
        const label = `${event.id} (${misuse ?? 'well-behaved'}): ${seen.map((r) => `${r.status} ${r.outcome}`).join(', ')}`
        expect(acknowledged(seen[seen.length - 1] as ReceiveResult), label).toBe(true)
        // Exactly one attempt's effects, whole: none lost, none twice, none half.
        const steps = await stepsOf(event.id)
        expect(steps, label).toHaveLength(2)
        const [after, before] = steps
        expect(after?.replace(/:.*/, ''), label).toBe(before?.replace(/:.*/, ''))
        expect([after?.endsWith(':after'), before?.endsWith(':before')], label).toEqual([
          true,
          true,
        ])
      }
    })
  })
}

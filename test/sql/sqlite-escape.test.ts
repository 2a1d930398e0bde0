/**
 * Issue 57 on SQLite, node:sqlite and better-sqlite3: a COMMIT the store did
 * not send, wherever it hides (a trigger body the statement reader misreads, a
 * text padded past what it reads, the outer handle), never leaves an event
 * answered 2xx with its effects partial, nor run twice. SQLite cannot refuse
 * such a commit: the claim's marker, committed with it, holds the event (500
 * event_held) until it is resolved. Whether the reader refuses a text first
 * does not matter here: each case checks the promise either way.
 */
import { createReceiver, type ReceiveResult } from '@affiliate-webhooks/core'
import {
  buildConversionEvent,
  buildTestEvent,
  signedDelivery,
} from '@affiliate-webhooks/core/testing'
import { type SqliteDatabase, sqliteStore } from '@affiliate-webhooks/sqlite'
import { afterAll, describe, expect, it, vi } from 'vitest'
import {
  createSqliteTestFile,
  openSqlite,
  SQLITE_LIBRARIES,
  type SqliteLibrary,
} from './sqlite-db.js'

const SECRET = 'whsec_sqlite_escape'

async function delivery(event: object, attempt = 1) {
  const signed = await signedDelivery({ secret: SECRET, event, attempt })
  return { headers: signed.headers, rawBody: new TextEncoder().encode(signed.body) }
}

const codeOf = (error: unknown) => (error as { code?: unknown } | undefined)?.code
const acknowledged = (r: ReceiveResult) => r.status >= 200 && r.status < 300

let trigger = 0
let conversionId = 70_000
/** A temporary trigger whose body the reader may take for a block, then the leak. */
const afterTrigger = (column: string, body: string, leak: string) =>
  `CREATE TEMP TRIGGER escape_${++trigger} AFTER UPDATE OF ${column} ON slots BEGIN ${body}; END; ${leak}`

/** Texts that end the claim's transaction; `outer`: sent on the database handle, not ctx.tx. */
const ESCAPES: { title: string; text: () => string; outer?: boolean }[] = [
  {
    title: 'a trigger on a column named begin, then COMMIT; BEGIN',
    text: () => afterTrigger('begin', 'SELECT 1', 'COMMIT; BEGIN'),
  },
  {
    title: 'a trigger on a column named "end", then COMMIT; BEGIN',
    text: () => afterTrigger('"end"', 'SELECT 1', 'COMMIT; BEGIN'),
  },
  {
    title: 'a trigger body with a CASE expression, then COMMIT; BEGIN',
    text: () => afterTrigger('begin', 'SELECT CASE WHEN 1 THEN 1 END', 'COMMIT; BEGIN'),
  },
  {
    title: 'a trigger on begin, then END TRANSACTION; BEGIN',
    text: () => afterTrigger('begin', 'SELECT 1', 'END TRANSACTION; BEGIN'),
  },
  {
    title: 'a trigger on begin, then eNd spelled in mixed case',
    text: () => afterTrigger('begin', 'SELECT 1', 'eNd'),
  },
  { title: 'COMMIT after 4,100 spaces', text: () => `${' '.repeat(4100)}COMMIT` },
  { title: 'END after 4,200 tabs', text: () => `${'\t'.repeat(4200)}END` },
  { title: 'COMMIT after a 5,000-character comment', text: () => `/*${'x'.repeat(5000)}*/ COMMIT` },
  {
    title: 'COMMIT after 5,000 newlines, then BEGIN',
    text: () => `${'\n'.repeat(5000)}COMMIT; BEGIN`,
  },
  { title: 'COMMIT; BEGIN on the outer handle', text: () => 'COMMIT; BEGIN', outer: true },
  {
    // SQLite reads $a(...) as one variable, quote included (node:sqlite's build).
    title: "a Tcl variable $a(') that took the rest for a string, then COMMIT; BEGIN",
    text: () => "SELECT $a(');COMMIT;BEGIN;SELECT 'x'",
  },
]

describe.each(SQLITE_LIBRARIES)('sqliteStore on %s: a COMMIT that escapes', (library) => {
  const file = createSqliteTestFile()
  const db = openSqlite(library, file.file)
  const reader = openSqlite(library, file.file)
  reader.exec(`CREATE TABLE effects (event_id TEXT NOT NULL, step TEXT NOT NULL, attempt INTEGER NOT NULL,
    PRIMARY KEY (event_id, step));
    CREATE TABLE slots (id INTEGER PRIMARY KEY, "begin" INTEGER, "end" INTEGER, "case" INTEGER)`)
  afterAll(() => {
    db.close()
    reader.close()
    file.drop()
  })
  const stepsOf = (eventId: string) =>
    (
      reader
        .prepare('SELECT step, attempt FROM effects WHERE event_id = ? ORDER BY step')
        .all(eventId) as { step: string; attempt: number }[]
    ).map((row) => `${row.step}${Number(row.attempt)}`)
  // Idempotent by (event, step), as README asks of a handler that may be rerun.
  const write = (tx: SqliteDatabase, eventId: string, step: string, attempt: number) =>
    tx
      .prepare(
        'INSERT INTO effects VALUES (?, ?, ?) ON CONFLICT (event_id, step) DO UPDATE SET attempt = excluded.attempt',
      )
      .run(eventId, step, attempt)

  /** The handler: writes a, sends the escape, writes b, and throws on attempt 1 when `throws`. */
  function scenario(leak: (typeof ESCAPES)[number], throws: boolean) {
    const logger = { warn: vi.fn(), error: vi.fn() }
    const store = sqliteStore({ database: db, logger })
    const seen = { refused: 0, gone: 0 }
    let attempt = 0
    const receiver = createReceiver({
      secret: SECRET,
      logger: false,
      store,
      async onConversion(_conversion, event, ctx) {
        attempt++
        // Prepared before the escape, run after it: refused once the transaction is gone.
        const b = ctx.tx.prepare(
          'INSERT INTO effects VALUES (?, ?, ?) ON CONFLICT (event_id, step) DO UPDATE SET attempt = excluded.attempt',
        )
        write(ctx.tx, event.id, 'a', attempt)
        if (attempt === 1) {
          try {
            ;(leak.outer ? db : ctx.tx).exec(leak.text())
          } catch (error) {
            if (codeOf(error) !== 'ERR_AW_TX_CONTROL') throw error
            seen.refused++
          }
        }
        try {
          b.run(event.id, 'b', attempt)
        } catch (error) {
          if (codeOf(error) !== 'ERR_AW_TX_GONE') throw error
          seen.gone++
          expect((error as Error).message).toMatch(/kept|nothing the handler wrote/)
        }
        if (throws && attempt === 1) throw new Error('attempt 1 fails after its writes')
      },
    })
    return { store, receiver, seen, logger }
  }

  /** Deliveries until a 2xx (resolving a held event with `action`), checking the promise at each answer. */
  async function settle(
    s: ReturnType<typeof scenario>,
    event: { id: string },
    first: ReceiveResult,
    action: 'rerun' | 'accept',
  ) {
    const answers = [first]
    let answer = first
    for (let attempt = 2; !acknowledged(answer) && attempt <= 6; attempt++) {
      if (answer.error?.code === 'event_held') {
        expect(answer.status).toBe(500)
        expect(answer.error.message).toMatch(new RegExp(`event ${event.id} is held`))
        expect(answer.error.message).toMatch(/resolveHeld/)
        // Held: the handler did not run again, nothing was written twice.
        expect(stepsOf(event.id)).toEqual(['a1'])
        const again = await s.receiver.receive(await delivery(event, attempt))
        expect([again.status, again.error?.code]).toEqual([500, 'event_held'])
        expect((await s.store.heldEvents()).map((h) => h.eventId)).toContain(event.id)
        expect(await s.store.resolveHeld(event.id, action)).toMatchObject({ eventId: event.id })
        expect(await s.store.heldEvents()).toEqual([])
      }
      answer = await s.receiver.receive(await delivery(event, attempt))
      answers.push(answer)
    }
    expect(acknowledged(answer), answer.error?.message).toBe(true)
    return answers
  }

  for (const leak of ESCAPES) {
    it(`${library}: ${leak.title}, handler throws on attempt 1: never 2xx with b missing, never twice; held until rerun`, async () => {
      const s = scenario(leak, true)
      const event = buildConversionEvent({ conversion: { id: ++conversionId } })
      const first = await s.receiver.receive(await delivery(event))
      expect(first.status).toBe(500)
      const escaped = s.seen.refused === 0
      // Escaped: the mark and a1 were committed by the handler's statement, b1 was not.
      expect(stepsOf(event.id)).toEqual(escaped ? ['a1'] : [])
      const answers = await settle(s, event, first, 'rerun')
      if (escaped) expect(answers[1]?.error?.code).toBe('event_held')
      // After the rerun (or the clean retry): both effects, once each, of one attempt.
      const steps = stepsOf(event.id)
      expect(steps).toHaveLength(2)
      expect(new Set(steps.map((step) => step.slice(1))).size).toBe(1)
      expect((await s.receiver.receive(await delivery(event, 9))).outcome).toBe('duplicate')
      if (escaped) {
        const named = s.logger.error.mock.calls.filter(([m]) => String(m).includes(event.id))
        expect(named).toHaveLength(1)
      }
    })

    it(`${library}: ${leak.title}, handler returns: not a silent 2xx; accepted as it was kept`, async () => {
      const s = scenario(leak, false)
      const event = buildConversionEvent({ conversion: { id: ++conversionId } })
      const first = await s.receiver.receive(await delivery(event))
      if (s.seen.refused > 0) {
        // Refused before SQLite saw it: the transaction went on and committed whole.
        expect(first.outcome).toBe('processed')
        expect(stepsOf(event.id)).toEqual(['a1', 'b1'])
        return
      }
      expect([first.status, first.error?.code]).toEqual([500, 'event_held'])
      expect(first.error?.message).toMatch(/committed by/)
      expect(stepsOf(event.id)).toEqual(['a1'])
      // A newer event of the conversion waits behind the held one.
      const newer = buildConversionEvent({ conversion: { id: event.data.conversion.id } })
      const behind = await s.receiver.receive(await delivery(newer))
      expect([behind.status, behind.error?.code]).toEqual([500, 'event_held'])
      await settle(s, event, first, 'accept')
      // Accepted: a duplicate from now on, the missing b1 stays missing (as the message said).
      expect(stepsOf(event.id)).toEqual(['a1'])
      expect((await s.receiver.receive(await delivery(newer, 2))).outcome).toBe('processed')
      expect(stepsOf(newer.id).map((step) => step[0])).toEqual(['a', 'b'])
    })
  }
})

describe.each(SQLITE_LIBRARIES)('sqliteStore on %s: an event without a conversion', (library) => {
  it(`${library}: a webhook.test whose handler commits on the outer handle is held on its own row, and rerun`, async () => {
    const file = createSqliteTestFile()
    const db = openSqlite(library, file.file)
    try {
      db.exec('CREATE TABLE effects (event_id TEXT NOT NULL, step TEXT NOT NULL)')
      const store = sqliteStore({ database: db, logger: false })
      let runs = 0
      const receiver = createReceiver({
        secret: SECRET,
        logger: false,
        store,
        on: {
          'webhook.test': (event, ctx) => {
            runs++
            const tx = (ctx as unknown as { tx: SqliteDatabase }).tx
            tx.prepare('INSERT INTO effects VALUES (?, ?)').run(event.id, `a${runs}`)
            if (runs === 1) db.exec('COMMIT; BEGIN')
            tx.prepare('INSERT INTO effects VALUES (?, ?)').run(event.id, `b${runs}`)
          },
        },
      })
      const event = buildTestEvent()
      const effects = () =>
        (db.prepare('SELECT step FROM effects ORDER BY step').all() as { step: string }[]).map(
          (row) => row.step,
        )
      const first = await receiver.receive(await delivery(event))
      expect([first.status, first.error?.code]).toEqual([500, 'event_held'])
      expect(effects()).toEqual(['a1'])
      const again = await receiver.receive(await delivery(event, 2))
      expect([again.status, again.error?.code, runs]).toEqual([500, 'event_held', 1])
      expect(await store.heldEvents()).toEqual([
        { eventId: event.id, conversionId: undefined, order: undefined },
      ])
      expect(await store.resolveHeld(event.id, 'rerun')).toEqual({
        eventId: event.id,
        conversionId: undefined,
        resolution: 'rerun',
        next: expect.stringMatching(/handler runs again/),
      })
      await expect(store.resolveHeld(event.id, 'rerun')).rejects.toMatchObject({
        code: 'ERR_AW_NOT_HELD',
      })
      expect((await receiver.receive(await delivery(event, 3))).outcome).toBe('processed')
      expect(effects()).toEqual(['a1', 'a2', 'b2'])
      expect((await receiver.receive(await delivery(event, 4))).outcome).toBe('duplicate')
    } finally {
      db.close()
      file.drop()
    }
  })
})

describe.each(SQLITE_LIBRARIES)('sqliteStore on %s: settings a handler changes', (library) => {
  it(`${library}: PRAGMA query_only = ON on the app's own handle is turned off before the next claim, said in the log; the next deliveries are 2xx`, async () => {
    const file = createSqliteTestFile()
    const db = openSqlite(library, file.file)
    try {
      db.exec('CREATE TABLE effects (event_id TEXT PRIMARY KEY)')
      const logger = { warn: vi.fn(), error: vi.fn() }
      const receiver = createReceiver({
        secret: SECRET,
        logger: false,
        store: sqliteStore({ database: db, logger }),
        async onConversion(_conversion, event, ctx) {
          ctx.tx.prepare('INSERT INTO effects VALUES (?)').run(event.id)
          if (event.data.conversion.id === 11) db.exec('PRAGMA query_only = ON')
        },
      })
      await receiver.receive(await delivery(buildConversionEvent({ conversion: { id: 11 } })))
      for (let id = 12; id <= 14; id++) {
        const next = await receiver.receive(
          await delivery(buildConversionEvent({ conversion: { id } })),
        )
        expect(next.outcome, next.error?.message).toBe('processed')
      }
      expect(logger.warn.mock.calls.map(([line]) => String(line))).toContainEqual(
        expect.stringMatching(/query_only was ON .*turned OFF/),
      )
    } finally {
      db.close()
      file.drop()
    }
  })

  it(`${library}: PRAGMA query_only = ON in a handler does not outlive its delivery; the next deliveries are 2xx`, async () => {
    const file = createSqliteTestFile()
    const db = openSqlite(library, file.file)
    try {
      db.exec('CREATE TABLE effects (event_id TEXT PRIMARY KEY)')
      const store = sqliteStore({ database: db, logger: false })
      const receiver = createReceiver({
        secret: SECRET,
        logger: false,
        store,
        async onConversion(_conversion, event, ctx) {
          ctx.tx.prepare('INSERT INTO effects VALUES (?)').run(event.id)
          if (event.data.conversion.id === 1) {
            ctx.tx.exec('PRAGMA query_only = ON')
            ctx.tx.exec(`${' '.repeat(4100)}COMMIT; PRAGMA synchronous = OFF; BEGIN`)
          }
        },
      })
      const spoiler = buildConversionEvent({ conversion: { id: 1 } })
      await receiver.receive(await delivery(spoiler))
      for (let id = 2; id <= 4; id++) {
        const next = await receiver.receive(
          await delivery(buildConversionEvent({ conversion: { id } })),
        )
        expect(next.outcome, next.error?.message).toBe('processed')
      }
      const setting = (name: string) =>
        Object.values(db.prepare(`PRAGMA ${name}`).get() as object)[0]
      expect(setting('query_only')).toBe(0)
      expect(setting('synchronous')).toBe(2)
    } finally {
      db.close()
      file.drop()
    }
  })
})

describe.each(SQLITE_LIBRARIES)(
  'sqliteStore on %s: layout 2 upgraded',
  (library: SqliteLibrary) => {
    it(`${library}: a file of layout 2 is upgraded in place on first use, its marks kept`, async () => {
      const file = createSqliteTestFile()
      const db = openSqlite(library, file.file)
      try {
        db.exec(`CREATE TABLE aw_schema (version INTEGER NOT NULL); INSERT INTO aw_schema VALUES (2);
        CREATE TABLE aw_events (event_id TEXT PRIMARY KEY, expires_at INTEGER NOT NULL);
        CREATE TABLE aw_conversions (conversion_id INTEGER PRIMARY KEY, watermark INTEGER NOT NULL,
          event_id TEXT NOT NULL, expires_at INTEGER NOT NULL);
        CREATE TABLE aw_streak (name TEXT PRIMARY KEY, count INTEGER NOT NULL, codes TEXT NOT NULL,
          expires_at INTEGER NOT NULL);
        INSERT INTO aw_conversions VALUES (6, 9000000000000000, 'kept', 9000000000000000)`)
        const event = buildConversionEvent({ conversion: { id: 5 } })
        const receiver = createReceiver({
          secret: SECRET,
          logger: false,
          store: sqliteStore({ database: db, logger: false }),
          async onConversion() {},
        })
        expect((await receiver.receive(await delivery(event))).outcome).toBe('processed')
        expect((await receiver.receive(await delivery(event, 2))).outcome).toBe('duplicate')
        const older = buildConversionEvent({ conversion: { id: 6 } })
        expect((await receiver.receive(await delivery(older))).outcome).toBe('stale')
        expect(db.prepare('SELECT version FROM aw_schema').get()).toMatchObject({ version: 3 })
      } finally {
        db.close()
        file.drop()
      }
    })
  },
)

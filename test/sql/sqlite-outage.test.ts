/**
 * SQLite's outage is file-level: no server to stop, but the file can be held by
 * another process: a migration, a backup or a VACUUM that takes the write lock
 * (here `BEGIN EXCLUSIVE` in a process of its own) and keeps it for seconds.
 * Meanwhile every delivery is answered 409 within lockWaitMs (well inside the
 * service's 10 s), nothing is acknowledged that was not handled, and the event
 * loop keeps serving; once the lock goes, each retry is handled exactly once.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createReceiver } from '@affiliate-webhooks/core'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import { sqliteStore } from '@affiliate-webhooks/sqlite'
import { afterAll, describe, expect, it } from 'vitest'
import { createSqliteTestFile, openSqlite, SQLITE_LIBRARIES } from './sqlite-db.js'

const SECRET = 'whsec_sqlite_outage'
const HOLD_MS = 4000

/** Another process holding the file's write lock for `ms`; resolves once it holds it. */
async function holdFile(file: string, ms: number) {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `const { DatabaseSync } = require('node:sqlite'); const db = new DatabaseSync(process.argv[1]);
       db.exec('BEGIN EXCLUSIVE'); db.exec('INSERT INTO effects VALUES (\\'holder\\', 0)');
       console.log('locked'); setTimeout(() => { db.exec('COMMIT'); db.close() }, Number(process.argv[2]))`,
      file,
      String(ms),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  await once(child.stdout, 'data')
  return { exited: once(child, 'exit') }
}

describe.each(SQLITE_LIBRARIES)(
  'SQLite outage on %s: another process holds the file',
  (library) => {
    const file = createSqliteTestFile()
    const database = openSqlite(library, file.file)
    afterAll(() => {
      database.close()
      file.drop()
    })

    it('answers 409 within lockWaitMs while the file is held, then handles each retry once', async () => {
      database.exec('CREATE TABLE effects (event_id TEXT NOT NULL, conversion_id INTEGER NOT NULL)')
      const lockWaitMs = 1000
      const receiver = createReceiver({
        secret: SECRET,
        logger: false,
        store: sqliteStore({ database, lockWaitMs }),
        async onConversion(conversion, event, ctx) {
          ctx.tx.prepare('INSERT INTO effects VALUES (?, ?)').run(event.id, conversion.id)
        },
      })
      const deliver = async (event: object) => {
        const signed = await signedDelivery({ secret: SECRET, event })
        return receiver.receive({
          headers: signed.headers,
          rawBody: new TextEncoder().encode(signed.body),
        })
      }
      const before = buildConversionEvent({ conversion: { id: 1 } })
      expect((await deliver(before)).outcome).toBe('processed')

      const holder = await holdFile(file.file, HOLD_MS)
      const during = Array.from({ length: 6 }, (_, i) =>
        buildConversionEvent({ conversion: { id: 100 + i } }),
      )
      // The event loop keeps running while the store waits for the lock: a timer still fires on time.
      let ticks = 0
      const ticker = setInterval(() => ticks++, 50)
      const started = performance.now()
      const answers = await Promise.all(during.map((event) => deliver(event)))
      const took = performance.now() - started
      clearInterval(ticker)
      for (const answer of answers) {
        expect([answer.status, answer.error?.code]).toEqual([409, 'event_in_progress'])
      }
      // One connection: the deliveries take turns, each waiting at most lockWaitMs in all.
      expect(took).toBeLessThan(lockWaitMs + 1500)
      expect(ticks).toBeGreaterThan(took / 50 / 2)

      await holder.exited
      for (const event of during) expect((await deliver(event)).outcome).toBe('processed')
      const rows = database
        .prepare(
          "SELECT event_id, COUNT(*) AS n FROM effects WHERE event_id <> 'holder' GROUP BY event_id",
        )
        .all() as { n: number }[]
      expect(rows.length).toBe(during.length + 1)
      expect(rows.every((row) => Number(row.n) === 1)).toBe(true)
    }, 30_000)
  },
)

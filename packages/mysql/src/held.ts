/**
 * Held events: a claim whose handled mark a statement of its handler made
 * durable (a COMMIT the store did not send, in a procedure, a compound
 * statement, an implicit commit). Its row carries a committed marker; until
 * resolved it and every newer event of its conversion are answered 500
 * `event_held`. Listing and resolving them, on one session, `?` placeholders:
 * as mysql2 and Prisma's MariaDB adapter both run them.
 */
import type { HeldEvent, HeldResolution, HeldResolved } from '@affiliate-webhooks/core'
import {
  checkResolution,
  heldNext,
  notHeld as notHeldError,
} from '@affiliate-webhooks/core/internal'
import type { SchemaNames } from './schema.js'
import type { MysqlRun } from './setup.js'
import { eventKey } from './statements.js'

/** A column as text: mysql2 returns VARBINARY as a Buffer, Prisma's adapter as a Uint8Array. */
const text = (value: unknown) =>
  value === null || value === undefined
    ? null
    : value instanceof Uint8Array
      ? Buffer.from(value).toString('utf8')
      : String(value)
const num = (value: unknown) => (value === null || value === undefined ? undefined : Number(value))

/**
 * Every held event, by a consistent read: a claim in flight has its marker
 * uncommitted, so only escaped claims show. A scan of both tables (no index on
 * the marker: one would cost every delivery a second index write).
 */
export async function heldEventsOn(run: MysqlRun, names: SchemaNames): Promise<HeldEvent[]> {
  const rows = await run<Record<string, unknown>>(
    `SELECT event_id AS e, CAST(conversion_id AS CHAR) AS c, watermark AS o
       FROM ${names.conversions} WHERE claim_token IS NOT NULL
     UNION ALL
     SELECT event_id, NULL, NULL FROM ${names.events} WHERE claim_token IS NOT NULL`,
  )
  return rows.map((row) => ({
    eventId: text(row.e) as string,
    conversionId: num(row.c),
    order: num(row.o),
  }))
}

const notHeld = (eventId: string) => notHeldError('mysqlStore', eventId)

/**
 * Resolves one held event inside the caller's transaction (READ WRITE, on
 * one session), its row locked first: `rerun` clears the marker and puts the
 * conversion's watermark back as it was before the claim (or removes the row
 * the claim made), so the next retry claims the event and runs its handler
 * again; `accept` clears the marker, and the event is then handled as it is
 * (its retry a duplicate).
 */
export async function resolveHeldOn(
  run: MysqlRun,
  names: SchemaNames,
  eventId: string,
  resolution: HeldResolution,
): Promise<HeldResolved> {
  checkResolution('mysqlStore', resolution)
  const key = eventKey(eventId)
  const held = await heldEventsOn(run, names)
  const found = held.find((event) => event.eventId === key)
  if (found === undefined) throw notHeld(eventId)
  const { conversionId } = found
  const next = heldNext(resolution, conversionId)
  if (conversionId === undefined) {
    const locked = await run<{ k: unknown }>(
      `SELECT event_id AS k FROM ${names.events} WHERE event_id = ? AND claim_token IS NOT NULL FOR UPDATE`,
      [key],
    )
    if (locked.length === 0) throw notHeld(eventId)
    await run(
      resolution === 'rerun'
        ? `DELETE FROM ${names.events} WHERE event_id = ?`
        : `UPDATE ${names.events} SET claim_token = NULL WHERE event_id = ?`,
      [key],
    )
    return { eventId, conversionId, resolution, next }
  }
  const rows = await run<{ p: unknown }>(
    `SELECT prev_watermark AS p FROM ${names.conversions} WHERE conversion_id = ? AND event_id = ? AND claim_token IS NOT NULL FOR UPDATE`,
    [conversionId, key],
  )
  if (rows.length === 0) throw notHeld(eventId)
  const put =
    resolution === 'accept'
      ? `UPDATE ${names.conversions} SET claim_token = NULL WHERE conversion_id = ?`
      : rows[0]?.p === null || rows[0]?.p === undefined
        ? `DELETE FROM ${names.conversions} WHERE conversion_id = ?`
        : `UPDATE ${names.conversions} SET watermark = prev_watermark, event_id = prev_event_id,
             expires_at = prev_expires_at, claim_token = NULL WHERE conversion_id = ?`
  await run(put, [conversionId])
  return { eventId, conversionId, resolution, next }
}

/**
 * The message of `event_held` for `eventId`, whose conversion's row (or own
 * row) carries `heldEvent`'s committed marker: what was kept, what the retry
 * gets, and how to resolve it (`resolve` writes the call, given its arguments).
 */
export function heldMessage(
  store: string,
  eventId: string,
  heldEvent: string,
  conversionId: string | undefined,
  resolve: (args: string) => string,
): string {
  const which =
    heldEvent === eventId
      ? `event ${eventId} is held`
      : `event ${eventId} waits: event ${heldEvent} of its conversion ${conversionId} is held`
  const scope =
    conversionId === undefined
      ? 'Until resolved its deliveries are answered 500 event_held.'
      : `Until resolved it and every newer event of conversion ${conversionId} are answered 500 event_held (none is answered duplicate or stale).`
  return `${store}: ${which}: its handled mark was committed by a statement its handler ran on ctx.tx (a COMMIT or an implicit commit the store did not send), not by the store's commit, so its effects may be partial: the writes its handler made before that statement were kept with the mark, none after it. ${scope} Resolve it with ${resolve(`'${heldEvent}', 'rerun'`)} (the retry runs the handler again: undo the kept writes first, or make sure the handler tolerates them) or ${resolve(`'${heldEvent}', 'accept'`)} (the event counts as handled as it is).`
}

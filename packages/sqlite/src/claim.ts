/**
 * The claim and the settled-event read, as statements on the connection. The
 * claim runs inside the delivery's BEGIN IMMEDIATE: no other writer, on this
 * connection or another, until it ends, so reading the row and raising it need
 * no lock of their own.
 */
import type { BeginInput } from '@affiliate-webhooks/core'
import type { SqliteStatement } from './database.js'
import type { SqliteNames } from './schema.js'
import type { Holder } from './turns.js'

export type Prepared = (sql: string) => SqliteStatement

interface Ttls {
  dedupeTtl: number
  orderingTtl: number
}

/** The claim's answer: claimed (with what it wrote, for the commit's check), duplicate or stale. */
export type ClaimVerdict =
  | { verdict: 'claimed'; holder: Holder; wrote: { watermark: number; expiresAt: number } }
  | { verdict: 'duplicate' | 'stale' }

interface MarkRow {
  watermark: number
  event_id: string
}

/** The committed mark of a conversion, unexpired, or undefined. */
export function markOf(
  prepared: Prepared,
  n: SqliteNames,
  conversionId: number,
  now: number,
): MarkRow | undefined {
  return prepared(
    `SELECT watermark, event_id FROM ${n.conversions} WHERE conversion_id = ? AND expires_at > ?`,
  ).get(conversionId, now) as MarkRow | undefined
}

/** Whether the event has an unexpired row of its own (handled without a conversion, or judged stale). */
export function eventDone(prepared: Prepared, n: SqliteNames, eventId: string, now: number) {
  return (
    prepared(`SELECT 1 AS done FROM ${n.events} WHERE event_id = ? AND expires_at > ?`).get(
      eventId,
      now,
    ) !== undefined
  )
}

/** An event at or below the watermark: its own event is a duplicate; another is stale, and marked so its retry is one. */
function settle(
  prepared: Prepared,
  n: SqliteNames,
  eventId: string,
  mark: MarkRow,
  now: number,
  ttls: Ttls,
): ClaimVerdict {
  if (mark.event_id === eventId || eventDone(prepared, n, eventId, now)) {
    return { verdict: 'duplicate' }
  }
  prepared(
    `INSERT INTO ${n.events} (event_id, expires_at) VALUES (?, ?)
     ON CONFLICT (event_id) DO UPDATE SET expires_at = excluded.expires_at`,
  ).run(eventId, now + ttls.dedupeTtl)
  return { verdict: 'stale' }
}

/** Runs inside the delivery's transaction: the verdict, and for a claim the row it raised. */
export function claimIn(
  prepared: Prepared,
  n: SqliteNames,
  input: BeginInput,
  ttls: Ttls,
  now: number,
): ClaimVerdict {
  const { eventId, conversionId, order } = input
  if (conversionId === undefined) {
    if (eventDone(prepared, n, eventId, now)) return { verdict: 'duplicate' }
    const expiresAt = now + ttls.dedupeTtl
    prepared(
      `INSERT INTO ${n.events} (event_id, expires_at) VALUES (?, ?)
       ON CONFLICT (event_id) DO UPDATE SET expires_at = excluded.expires_at`,
    ).run(eventId, expiresAt)
    return {
      verdict: 'claimed',
      holder: { eventId, conversionId, before: undefined },
      wrote: { watermark: 0, expiresAt },
    }
  }
  const mark = markOf(prepared, n, conversionId, now)
  if (mark !== undefined && mark.watermark >= order) {
    return settle(prepared, n, eventId, mark, now, ttls)
  }
  const expiresAt = now + ttls.orderingTtl
  prepared(
    `INSERT INTO ${n.conversions} (conversion_id, watermark, event_id, expires_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (conversion_id) DO UPDATE SET
       watermark = excluded.watermark, event_id = excluded.event_id, expires_at = excluded.expires_at`,
  ).run(conversionId, order, eventId, expiresAt)
  const before =
    mark === undefined ? undefined : { watermark: mark.watermark, eventId: mark.event_id }
  return {
    verdict: 'claimed',
    holder: { eventId, conversionId, before },
    wrote: { watermark: order, expiresAt },
  }
}

/**
 * The claim's row still holds what it wrote: the handler did not end the
 * transaction (a ROLLBACK, and maybe a BEGIN) before the store's commit.
 */
export function stillHeld(
  prepared: Prepared,
  n: SqliteNames,
  input: { eventId: string; conversionId?: number | undefined },
  wrote: { watermark: number; expiresAt: number },
): boolean {
  if (input.conversionId === undefined) {
    const row = prepared(`SELECT expires_at FROM ${n.events} WHERE event_id = ?`).get(
      input.eventId,
    ) as { expires_at: number } | undefined
    return row?.expires_at === wrote.expiresAt
  }
  const row = prepared(
    `SELECT watermark, event_id, expires_at FROM ${n.conversions} WHERE conversion_id = ?`,
  ).get(input.conversionId) as (MarkRow & { expires_at: number }) | undefined
  return (
    row?.watermark === wrote.watermark &&
    row.event_id === input.eventId &&
    row.expires_at === wrote.expiresAt
  )
}

/**
 * What a delivery can be told at once while another delivery holds the
 * connection: its reads there see that delivery's uncommitted row, so the row
 * the holder raised is read as it was before. Undefined: not settled (wait).
 * A stale event is not marked here (a write would join the holder's
 * transaction): its retry is answered stale again, the same 2xx.
 */
export function settledWhileBusy(
  prepared: Prepared,
  n: SqliteNames,
  input: BeginInput,
  holder: Holder | undefined,
  now: number,
): 'duplicate' | 'stale' | undefined {
  const { eventId, conversionId, order } = input
  if (holder?.eventId === eventId) return undefined
  if (eventDone(prepared, n, eventId, now)) return 'duplicate'
  if (conversionId === undefined) return undefined
  const row = markOf(prepared, n, conversionId, now)
  const mark =
    holder !== undefined && holder.conversionId === conversionId
      ? holder.before
      : row && { watermark: row.watermark, eventId: row.event_id }
  if (mark === undefined || mark.watermark < order) return undefined
  return mark.eventId === eventId ? 'duplicate' : 'stale'
}

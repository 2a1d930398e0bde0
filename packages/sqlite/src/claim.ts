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

/** The claim's answer: claimed (with its row, for the final step), duplicate, stale, or held. */
export type ClaimVerdict =
  | { verdict: 'claimed'; holder: Holder; wrote: { watermark: number; expiresAt: number } }
  | { verdict: 'duplicate' | 'stale' }
  | { verdict: 'held'; held: HeldRow }

/**
 * An event whose claim was made durable by a statement of its handler (a
 * COMMIT the store did not send): its mark and the writes before that
 * statement were kept, what came after was not. Neither duplicate nor new.
 */
export interface HeldRow {
  eventId: string
  /** Its conversion; undefined for an event without one. */
  conversionId: number | undefined
  /** The event's order, which its claim raised the conversion's watermark to. */
  order: number | undefined
  /** The conversion's committed mark before the claim ('rerun' puts it back); undefined: none. */
  previous: { watermark: number; eventId: string } | undefined
}

interface MarkRow {
  watermark: number
  event_id: string
  expires_at: number
  claim_token: string | null
  prev_watermark: number | null
  prev_event_id: string | null
}

/** The conversion's row, expired or not, held or not. */
export function rowOf(prepared: Prepared, n: SqliteNames, conversionId: number) {
  return prepared(
    `SELECT watermark, event_id, expires_at, claim_token, prev_watermark, prev_event_id
     FROM ${n.conversions} WHERE conversion_id = ?`,
  ).get(conversionId) as MarkRow | undefined
}

/** A conversion's held row, as a {@link HeldRow}. */
export function heldOf(conversionId: number, row: MarkRow): HeldRow {
  return {
    eventId: row.event_id,
    conversionId,
    order: row.watermark,
    previous:
      row.prev_watermark === null || row.prev_event_id === null
        ? undefined
        : { watermark: row.prev_watermark, eventId: row.prev_event_id },
  }
}

/** Whether the event has an unexpired settled row of its own (handled without a conversion, or judged stale). */
export function eventDone(prepared: Prepared, n: SqliteNames, eventId: string, now: number) {
  return (
    prepared(
      `SELECT 1 AS done FROM ${n.events} WHERE event_id = ? AND expires_at > ? AND claim_token IS NULL`,
    ).get(eventId, now) !== undefined
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

/** An event without a conversion: its own row is its mark, with the claim's token on it. */
function claimAlone(
  prepared: Prepared,
  n: SqliteNames,
  eventId: string,
  token: string,
  ttls: Ttls,
  now: number,
): ClaimVerdict {
  const row = prepared(`SELECT expires_at, claim_token FROM ${n.events} WHERE event_id = ?`).get(
    eventId,
  ) as { expires_at: number; claim_token: string | null } | undefined
  if (row?.claim_token != null) {
    const held = { eventId, conversionId: undefined, order: undefined, previous: undefined }
    return { verdict: 'held', held }
  }
  if (row !== undefined && row.expires_at > now) return { verdict: 'duplicate' }
  const expiresAt = now + ttls.dedupeTtl
  prepared(
    `INSERT INTO ${n.events} (event_id, expires_at, claim_token) VALUES (?, ?, ?)
     ON CONFLICT (event_id) DO UPDATE SET expires_at = excluded.expires_at, claim_token = excluded.claim_token`,
  ).run(eventId, expiresAt, token)
  return {
    verdict: 'claimed',
    holder: { eventId, conversionId: undefined, before: undefined },
    wrote: { watermark: 0, expiresAt },
  }
}

/**
 * Runs inside the delivery's transaction: the verdict, and for a claim the row
 * it raised, marked with `token` until the store's final step clears it. A
 * conversion whose row is held holds every event of it but the two already
 * settled (the one before the held event, and events judged stale).
 */
export function claimIn(
  prepared: Prepared,
  n: SqliteNames,
  input: BeginInput,
  token: string,
  ttls: Ttls,
  now: number,
): ClaimVerdict {
  const { eventId, conversionId, order } = input
  if (conversionId === undefined) return claimAlone(prepared, n, eventId, token, ttls, now)
  const row = rowOf(prepared, n, conversionId)
  if (row !== undefined && row.claim_token !== null) {
    if (row.event_id !== eventId) {
      if (row.prev_event_id === eventId || eventDone(prepared, n, eventId, now)) {
        return { verdict: 'duplicate' }
      }
    }
    return { verdict: 'held', held: heldOf(conversionId, row) }
  }
  const mark = row !== undefined && row.expires_at > now ? row : undefined
  if (mark !== undefined && mark.watermark >= order) {
    return settle(prepared, n, eventId, mark, now, ttls)
  }
  const expiresAt = now + ttls.orderingTtl
  prepared(
    `INSERT INTO ${n.conversions}
       (conversion_id, watermark, event_id, expires_at, claim_token, prev_watermark, prev_event_id)
     VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (conversion_id) DO UPDATE SET
       watermark = excluded.watermark, event_id = excluded.event_id, expires_at = excluded.expires_at,
       claim_token = excluded.claim_token, prev_watermark = excluded.prev_watermark,
       prev_event_id = excluded.prev_event_id`,
  ).run(
    conversionId,
    order,
    eventId,
    expiresAt,
    token,
    mark?.watermark ?? null,
    mark?.event_id ?? null,
  )
  const before =
    mark === undefined ? undefined : { watermark: mark.watermark, eventId: mark.event_id }
  return {
    verdict: 'claimed',
    holder: { eventId, conversionId, before },
    wrote: { watermark: order, expiresAt },
  }
}

/**
 * The store's final statement before its COMMIT: clears the claim's token.
 * False when the row no longer carries it (the handler changed or removed the
 * store's row): then the mark is not what the claim wrote.
 */
export function clearMarker(
  prepared: Prepared,
  n: SqliteNames,
  input: { eventId: string; conversionId?: number | undefined },
  token: string,
): boolean {
  const result = (
    input.conversionId === undefined
      ? prepared(
          `UPDATE ${n.events} SET claim_token = NULL WHERE event_id = ? AND claim_token = ?`,
        ).run(input.eventId, token)
      : prepared(
          `UPDATE ${n.conversions} SET claim_token = NULL WHERE conversion_id = ? AND claim_token = ?`,
        ).run(input.conversionId, token)
  ) as { changes: number | bigint }
  return Number(result.changes) === 1
}

/** Whether the claim's token is on its row as the connection reads it: committed, outside a transaction. */
export function markerKept(
  prepared: Prepared,
  n: SqliteNames,
  input: { eventId: string; conversionId?: number | undefined },
  token: string,
): boolean {
  const found =
    input.conversionId === undefined
      ? prepared(`SELECT 1 AS kept FROM ${n.events} WHERE event_id = ? AND claim_token = ?`).get(
          input.eventId,
          token,
        )
      : prepared(
          `SELECT 1 AS kept FROM ${n.conversions} WHERE conversion_id = ? AND claim_token = ?`,
        ).get(input.conversionId, token)
  return found !== undefined
}

/**
 * What a delivery can be told at once while another delivery holds the
 * connection: its reads there see that delivery's uncommitted row, so the row
 * the holder raised is read as it was before. Undefined: not settled (wait).
 * A stale event is not marked here (a write would join the holder's
 * transaction): its retry is answered stale again, the same 2xx. A held
 * conversion is not settled here: the claim answers it.
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
  let mark: { watermark: number; eventId: string } | undefined
  if (holder !== undefined && holder.conversionId === conversionId) mark = holder.before
  else {
    const row = rowOf(prepared, n, conversionId)
    // A held row is committed (the holder is on another conversion): the claim answers it.
    if (row?.claim_token != null) return undefined
    if (row !== undefined && row.expires_at > now) {
      mark = { watermark: row.watermark, eventId: row.event_id }
    }
  }
  if (mark === undefined || mark.watermark < order) return undefined
  return mark.eventId === eventId ? 'duplicate' : 'stale'
}

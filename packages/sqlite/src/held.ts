/**
 * Held events: a claim whose mark became durable through a COMMIT the store
 * did not send. What they are told, and how an operator resolves them.
 */
import {
  type HeldEvent,
  type HeldResolution,
  type HeldResolved,
  WebhookError,
} from '@affiliate-webhooks/core'
import { heldNext, notHeld } from '@affiliate-webhooks/core/internal'
import { type HeldRow, heldOf, type Prepared, rowOf } from './claim.js'
import type { SqliteNames } from './schema.js'

/** How to resolve a held event, for every message that names one. */
const HOW =
  "Resolve it with store.resolveHeld(eventId, 'rerun') (the next delivery runs the handler again: what it kept stays, so the handler must tolerate it or you undo it first) or store.resolveHeld(eventId, 'accept') (taken as handled: what was not kept stays missing); store.heldEvents() lists them."

/** A statement as a message shows it: padding folded, a long one cut in the middle. */
function shown(text: string): string {
  const folded = text.replace(/\s+/g, ' ').trim()
  return folded.length > 200 ? `${folded.slice(0, 90)} ... ${folded.slice(-90)}` : folded
}

/** The log line and the 500's reason, said once per held event. */
export function heldMessage(held: HeldRow, endedBy: string | undefined): string {
  const statement =
    endedBy === undefined
      ? 'a COMMIT the store did not send (inside a text ctx.tx could not read, or a trigger; which statement was not seen)'
      : `the handler's statement ${JSON.stringify(shown(endedBy))}`
  const conversion =
    held.conversionId === undefined
      ? ''
      : ` Newer events of conversion ${held.conversionId} are held behind it.`
  return `sqliteStore: event ${held.eventId} is held: its handled mark was committed by ${statement}, not by the store. What the handler wrote before that statement was kept with the mark (and whatever a later COMMIT of its own committed); what it wrote after its last COMMIT was rolled back, or never written if it threw: its effects may be partial. Every delivery of it is answered 500 event_held until it is resolved.${conversion} ${HOW}`
}

/** The answer to a delivery of a held conversion that is not the held event itself. */
export function heldError(held: HeldRow, eventId: string, endedBy?: string): WebhookError {
  const message = heldMessage(held, endedBy)
  return new WebhookError(
    'event_held',
    eventId === held.eventId
      ? message
      : `sqliteStore: event ${eventId} waits behind held event ${held.eventId} of conversion ${held.conversionId}. ${message}`,
  )
}

/** Every held event on the file. */
export function heldIn(prepared: Prepared, n: SqliteNames): HeldRow[] {
  const conversions = prepared(
    `SELECT conversion_id FROM ${n.conversions} WHERE claim_token IS NOT NULL ORDER BY conversion_id`,
  ).all() as { conversion_id: number }[]
  const held: HeldRow[] = []
  for (const { conversion_id } of conversions) {
    const row = rowOf(prepared, n, conversion_id)
    if (row !== undefined) held.push(heldOf(conversion_id, row))
  }
  const alone = prepared(
    `SELECT event_id FROM ${n.events} WHERE claim_token IS NOT NULL ORDER BY event_id`,
  ).all() as { event_id: string }[]
  for (const { event_id } of alone) {
    held.push({ eventId: event_id, conversionId: undefined, order: undefined, previous: undefined })
  }
  return held
}

/**
 * Resolves one held event inside the store's own transaction. 'accept' clears
 * the marker: the event is handled, its retries are duplicates. 'rerun' puts
 * the conversion's mark back as it was before the claim (or removes the
 * event's own row): its next delivery runs the handler. Throws when not held.
 */
export function resolveHeldIn(
  prepared: Prepared,
  n: SqliteNames,
  eventId: string,
  action: HeldResolution,
): HeldResolved {
  const resolved = (conversionId: number | undefined): HeldResolved => ({
    eventId,
    conversionId,
    resolution: action,
    next: heldNext(action, conversionId),
  })
  const found = prepared(
    `SELECT conversion_id, prev_watermark FROM ${n.conversions} WHERE event_id = ? AND claim_token IS NOT NULL`,
  ).get(eventId) as { conversion_id: number; prev_watermark: number | null } | undefined
  if (found !== undefined) {
    const id = found.conversion_id
    if (action === 'accept') {
      prepared(
        `UPDATE ${n.conversions} SET claim_token = NULL, prev_watermark = NULL, prev_event_id = NULL WHERE conversion_id = ?`,
      ).run(id)
    } else if (found.prev_watermark === null) {
      prepared(`DELETE FROM ${n.conversions} WHERE conversion_id = ?`).run(id)
    } else {
      prepared(
        `UPDATE ${n.conversions} SET watermark = prev_watermark, event_id = prev_event_id,
           claim_token = NULL, prev_watermark = NULL, prev_event_id = NULL WHERE conversion_id = ?`,
      ).run(id)
    }
    return resolved(id)
  }
  const alone = prepared(
    action === 'accept'
      ? `UPDATE ${n.events} SET claim_token = NULL WHERE event_id = ? AND claim_token IS NOT NULL`
      : `DELETE FROM ${n.events} WHERE event_id = ? AND claim_token IS NOT NULL`,
  ).run(eventId) as { changes: number | bigint }
  if (Number(alone.changes) !== 1) throw notHeld('sqliteStore', eventId)
  return resolved(undefined)
}

/** A held row as the store lists it. */
export const listed = ({ eventId, conversionId, order }: HeldRow): HeldEvent => ({
  eventId,
  conversionId,
  order,
})

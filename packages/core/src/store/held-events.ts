/**
 * Held events: what a SQL store that cannot refuse a commit it did not send
 * (MySQL, MariaDB, SQLite) does with an event whose handled mark such a commit
 * made durable. Its effects may be partial, so it is never answered 2xx: every
 * delivery of it, and of the newer events of its conversion, is answered 500
 * `event_held` until someone resolves it. The stores list and resolve them
 * with these shapes; the CLI (`sql held`, `sql resolve`, `doctor`) prints them.
 */

/** One held event. */
export interface HeldEvent {
  /** The event whose mark escaped the store's commit (MySQL: its key, a hash for an id over 255 bytes). */
  eventId: string
  /** Its conversion; undefined for an event without one (webhook.test). */
  conversionId: number | undefined
  /** The order its claim raised the conversion's watermark to; undefined without a conversion. */
  order: number | undefined
}

/**
 * How a held event is resolved: `rerun` puts the conversion's mark back as it
 * was before the claim, so the next delivery runs the handler again (what the
 * first run kept stays: undo it, or let the handler tolerate it); `accept`
 * takes the event as handled as it is (what was not kept stays missing), so
 * its next delivery is a duplicate.
 */
export type HeldResolution = 'rerun' | 'accept'

/** What resolving a held event did, and what its next delivery gets. */
export interface HeldResolved {
  eventId: string
  conversionId: number | undefined
  resolution: HeldResolution
  /** What the event's next delivery is answered, in words. */
  next: string
}

/** A store that may hold events, and resolves them. */
export interface HoldingStore {
  /** Every held event. */
  heldEvents(): Promise<HeldEvent[]>
  /** Resolves one; rejects, saying so, when it is not held (never, or resolved already). */
  resolveHeld(eventId: string, resolution: HeldResolution): Promise<HeldResolved>
}

/** What the next delivery of an event resolved with `resolution` gets. */
export function heldNext(resolution: HeldResolution, conversionId: number | undefined): string {
  const next =
    resolution === 'rerun'
      ? 'its next delivery is claimed and its handler runs again (undo or tolerate the writes its first run kept)'
      : 'its next delivery is answered 200 duplicate'
  return conversionId === undefined
    ? next
    : `${next}; newer events of conversion ${conversionId} are claimed again`
}

/** The resolution, checked: a typo must not resolve anything. */
export function checkResolution(store: string, resolution: unknown): HeldResolution {
  if (resolution === 'rerun' || resolution === 'accept') return resolution
  throw new TypeError(
    `${store}: resolveHeld's resolution is 'rerun' or 'accept'; got ${String(resolution)}`,
  )
}

/** Not held (never, or resolved already). */
export function notHeld(store: string, eventId: string): Error {
  return Object.assign(
    new Error(
      `${store}: event ${eventId} is not held (never held, or resolved already); heldEvents() lists the held ones`,
    ),
    { code: 'ERR_AW_NOT_HELD' },
  )
}

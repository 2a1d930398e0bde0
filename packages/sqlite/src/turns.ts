/**
 * SQLite has one writer, and a connection one transaction: deliveries on one
 * connection take turns. A turn is held from the claim's BEGIN IMMEDIATE to its
 * COMMIT or ROLLBACK; the store's other writes (setup, streak, prune) take one
 * too. Every store on the same connection shares its turns.
 */

/** What the holder of a turn claimed: read by a waiter to answer a settled event at once. */
export interface Holder {
  eventId: string
  conversionId: number | undefined
  /** The conversion's committed row before the claim raised it (none: no row, or expired). */
  before: { watermark: number; eventId: string } | undefined
}

interface Waiter {
  resolve: (got: boolean) => void
  timer: ReturnType<typeof setTimeout> | undefined
}

export class Turns {
  /** Set while a turn is held; `holder` once it is a claim's. */
  busy = false
  holder: Holder | undefined
  private readonly waiting: Waiter[] = []

  /** Resolves true with the turn, or false when `waitMs` passed first. */
  take(waitMs: number): Promise<boolean> {
    if (!this.busy) {
      this.busy = true
      return Promise.resolve(true)
    }
    return new Promise((resolve) => {
      const waiter: Waiter = { resolve, timer: undefined }
      waiter.timer = setTimeout(() => {
        const at = this.waiting.indexOf(waiter)
        if (at >= 0) this.waiting.splice(at, 1)
        resolve(false)
      }, waitMs)
      this.waiting.push(waiter)
    })
  }

  /** Hands the turn to the next waiter, or frees it. */
  pass(): void {
    this.holder = undefined
    const next = this.waiting.shift()
    if (next === undefined) {
      this.busy = false
      return
    }
    clearTimeout(next.timer)
    next.resolve(true)
  }
}

const byDatabase = new WeakMap<object, Turns>()

/** The turns of a connection, shared by every store on it. */
export function turnsOf(database: object): Turns {
  let turns = byDatabase.get(database)
  if (turns === undefined) {
    turns = new Turns()
    byDatabase.set(database, turns)
  }
  return turns
}

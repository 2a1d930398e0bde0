import type { Clock } from '../shared/clock.js'
import { batchAtOrAfter, batchAtOrBefore } from './schedule.js'

/** What the pump moves from waiting to in flight: a delivery with its due time. */
export interface Queued {
  /** Service time of the next attempt, epoch ms. */
  nextAttemptAt: number | undefined
}

/** Options of {@link Pump}. */
export interface PumpOptions<T extends Queued> {
  clock: Clock
  /** Batches go out every this many service ms from `origin`; 0 sends each delivery when due. */
  batchIntervalMs: number
  /** Service time of the first batch. */
  origin: number
  /** Attempts in flight at once. */
  concurrency: number
  /** Makes one attempt of a due delivery, sent with the batch of service time `batchAt`. */
  attempt: (item: T, batchAt: number) => Promise<void>
  /** When an attempt threw (a callback of the caller, or writing the state file). */
  onError: (error: unknown) => void
}

const dueOf = (item: Queued) => item.nextAttemptAt as number
const byDue = (a: Queued, b: Queued) => dueOf(a) - dueOf(b)

/**
 * The one delivery loop: deliveries wait until due, go out with the next batch,
 * at most `concurrency` at once. It runs on timers by the clock (scaled real
 * time), or step by step while {@link Pump.advance} moves the clock by hand.
 * Events that occur later (`occurAt`) are part of the same timeline.
 */
export class Pump<T extends Queued> {
  private readonly waiting = new Set<T>()
  /** Due, taken by a batch, waiting for a free slot; oldest due first. */
  private readonly ready: { item: T; batchAt: number }[] = []
  private readonly upcoming: { at: number; occur: () => void }[] = []
  private readonly inFlight = new Map<T, Promise<void>>()
  private closed = false
  private advancing = 0
  private timer: NodeJS.Timeout | undefined
  private timerAt = Number.POSITIVE_INFINITY
  private soon = false
  private idleWaiters: (() => void)[] = []
  private advanceChain: Promise<unknown> = Promise.resolve()

  constructor(private readonly options: PumpOptions<T>) {}

  /** Queues a delivery; it goes out with the first batch at or after its due time. */
  add(item: T): void {
    this.waiting.add(item)
    this.runSoon()
  }

  /** Forgets a delivery that has not gone out yet. */
  remove(item: T): void {
    this.waiting.delete(item)
    const index = this.ready.findIndex((entry) => entry.item === item)
    if (index !== -1) this.ready.splice(index, 1)
  }

  /** Runs `occur` at service time `at` (an event that occurs then), before that batch goes out. */
  occurAt(at: number, occur: () => void): void {
    this.upcoming.push({ at, occur })
    this.runSoon()
  }

  /** Looks again at what is due, at once (after a change such as an endpoint enabled). */
  poke(): void {
    this.runBatch()
  }

  /** Events still to occur, attempts in flight. */
  counts(): { upcoming: number; inFlight: number } {
    return { upcoming: this.upcoming.length, inFlight: this.inFlight.size }
  }

  /** Resolves once nothing is upcoming, queued or in flight. */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve()
    return new Promise((resolve) => this.idleWaiters.push(resolve))
  }

  /**
   * Moves the clock by `ms`, running every batch that comes due in order: the
   * attempts of one batch go out together (at most `concurrency` at once), as the
   * service sends a batch, and the next batch waits until they have all settled.
   * Resolves after the last.
   */
  advance(ms: number, after: () => void): Promise<void> {
    const run = this.advanceChain.then(async () => {
      this.advancing++
      this.clearTimer()
      try {
        await this.runUntil(this.options.clock.now() + ms)
      } finally {
        this.advancing--
        after()
        this.runBatch()
      }
    })
    this.advanceChain = run.catch(() => {})
    return run
  }

  /** Stops sending and waits for the attempts in flight. */
  async close(): Promise<void> {
    this.closed = true
    this.clearTimer()
    await Promise.allSettled(this.inFlight.values())
    this.settleIdle(true)
  }

  private batchAtOrAfter(t: number): number {
    return batchAtOrAfter(t, this.options.origin, this.options.batchIntervalMs)
  }

  private batchAtOrBefore(t: number): number {
    return batchAtOrBefore(t, this.options.origin, this.options.batchIntervalMs)
  }

  private nextDue(): number {
    let next = Number.POSITIVE_INFINITY
    for (const item of this.waiting) next = Math.min(next, dueOf(item))
    for (const { item } of this.ready) next = Math.min(next, dueOf(item))
    for (const event of this.upcoming) next = Math.min(next, event.at)
    return next
  }

  /** The batch at `now`: events that occurred by now, then what was due by the batch's time. */
  private collect(now: number): { item: T; batchAt: number }[] {
    const occurred = this.upcoming.filter((event) => event.at <= now).sort((a, b) => a.at - b.at)
    for (const event of occurred) {
      this.upcoming.splice(this.upcoming.indexOf(event), 1)
      event.occur()
    }
    // A timer that fired late (high time scales) still sends nothing before its time.
    const batchAt = this.batchAtOrBefore(now)
    const due: T[] = []
    for (const item of this.waiting) {
      if (dueOf(item) <= batchAt) {
        this.waiting.delete(item)
        due.push(item)
      }
    }
    return due.sort(byDue).map((item) => ({ item, batchAt }))
  }

  private runSoon(): void {
    if (this.soon) return
    this.soon = true
    setImmediate(() => this.runBatch())
  }

  private runBatch(): void {
    this.soon = false
    this.clearTimer()
    if (this.closed || this.advancing) return
    this.ready.push(...this.collect(this.options.clock.now()))
    this.drain()
    this.arm()
    this.settleIdle(false)
  }

  private start({ item, batchAt }: { item: T; batchAt: number }): Promise<void> {
    const running = this.options
      .attempt(item, batchAt)
      .catch(this.options.onError)
      .finally(() => {
        this.inFlight.delete(item)
        if (this.advancing) return
        this.drain()
        this.arm()
        this.settleIdle(false)
      })
    this.inFlight.set(item, running)
    return running
  }

  private drain(): void {
    const { concurrency } = this.options
    while (!this.closed && !this.advancing && this.inFlight.size < concurrency) {
      const entry = this.ready.shift()
      if (!entry) return
      void this.start(entry)
    }
  }

  private arm(): void {
    if (this.closed || this.advancing) return
    const { clock } = this.options
    const next = this.nextDue()
    if (next === Number.POSITIVE_INFINITY) {
      this.clearTimer()
      return
    }
    const at = this.batchAtOrAfter(Math.max(next, clock.now()))
    if (this.timer && this.timerAt <= at) return
    this.clearTimer()
    this.timerAt = at
    // setTimeout takes at most 2^31-1 ms; a later batch is re-armed when this fires.
    this.timer = setTimeout(() => this.runBatch(), Math.min(clock.realDelay(at), 2 ** 31 - 1))
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    this.timerAt = Number.POSITIVE_INFINITY
  }

  private async runUntil(target: number): Promise<void> {
    const { clock } = this.options
    for (;;) {
      if (this.inFlight.size > 0) {
        await Promise.all(this.inFlight.values())
        continue
      }
      const next = this.batchAtOrAfter(this.nextDue())
      if (next > target) break
      clock.advanceTo(next)
      await this.sendBatch([...this.ready.splice(0), ...this.collect(clock.now())])
    }
    clock.advanceTo(target)
  }

  /** One batch while advancing: every attempt out at once, up to `concurrency`; resolves when all settled. */
  private async sendBatch(due: { item: T; batchAt: number }[]): Promise<void> {
    const lane = async () => {
      for (let entry = due.shift(); entry; entry = due.shift()) await this.start(entry)
    }
    const lanes = Math.min(this.options.concurrency, due.length)
    await Promise.all(Array.from({ length: lanes }, lane))
  }

  private isIdle(): boolean {
    return (
      this.upcoming.length === 0 &&
      this.waiting.size === 0 &&
      this.ready.length === 0 &&
      this.inFlight.size === 0
    )
  }

  private settleIdle(force: boolean): void {
    if (this.idleWaiters.length === 0 || (!force && !this.isIdle())) return
    const waiters = this.idleWaiters
    this.idleWaiters = []
    for (const resolve of waiters) resolve()
  }
}

/** Queue records kept in front of the oldest one before the queue is cut. */
const SLACK = 1024

/**
 * Keys bounded in number and in time: an entry is forgotten `ttl` ms after it
 * was last set and, past `max` entries, the one set longest ago goes first. It
 * starts empty and grows with use: nothing is allocated for `max` up front, so
 * creating one costs nothing at a cold start.
 *
 * Beside the Map, a queue holds every key with the moment it was set, in the
 * order set, which is also the order of expiry (one ttl for all). Setting a key
 * again leaves its old record in the queue, recognised as replaced when met
 * (its moment differs from the entry's; a key set twice in one ms has two
 * records that both look current, and the first one met acts for it, which
 * changes no expiry). Expired and surplus entries are dropped
 * from the front of the queue when one is set, and expired ones met on reading.
 * (Walking the Map from its front instead would skip every entry deleted there
 * before, which grows with the Map.)
 *
 * Moments are kept as ms since the first one seen: small whole numbers, which V8
 * stores in the Map and the queue without a heap object each (an absolute
 * `Date.now()` would need one). Every call takes the time `at` from its caller,
 * which reads the clock once per store operation.
 */
abstract class ExpiryOrder<K, S> {
  protected readonly entries = new Map<K, S>()
  /** Key, moment, key, moment...: two slots a record, oldest first from `#head`. */
  #queue: unknown[] = []
  #head = 0
  readonly #max: number
  readonly #ttl: number
  #origin: number | undefined

  /** `name` is what the error of a bad `max` calls it: the caller's option, for its users. */
  constructor(max: number, ttl: number, name = 'ExpiringMap: max') {
    if (!Number.isSafeInteger(max) || max < 1) {
      throw new TypeError(`${name} must be a whole number >= 1; got ${max}`)
    }
    this.#max = max
    this.#ttl = ttl
  }

  get size(): number {
    return this.entries.size
  }

  /** The moment an entry was set, from its slot. */
  protected abstract momentOf(slot: S): number

  /** `at` on the queue's scale: ms since the first moment seen. */
  protected moment(at: number): number {
    if (this.#origin === undefined) this.#origin = at
    return at - this.#origin
  }

  /** The entry's slot if it is alive at moment `now`; an expired one met here is dropped. */
  protected live(key: K, now: number): S | undefined {
    const slot = this.entries.get(key)
    if (slot === undefined || this.momentOf(slot) + this.#ttl >= now) return slot
    this.entries.delete(key)
    return undefined
  }

  /** Queues a key just set at moment `now`, and drops the oldest entries due. */
  protected queue(key: K, now: number): void {
    const queue = this.#queue
    queue.push(key, now)
    if (this.entries.size > this.#max || (queue[this.#head + 1] as number) + this.#ttl < now) {
      this.#trim(now)
    } else if (queue.length - this.#head > 4 * this.entries.size + SLACK) {
      this.#compact()
    }
  }

  /** True when the record (key, moment) is the key's current entry. */
  #current(key: K, moment: number): boolean {
    const slot = this.entries.get(key)
    return slot !== undefined && this.momentOf(slot) === moment
  }

  /** Drops expired entries and those past `max`, and replaced records, from the front. */
  #trim(now: number): void {
    const queue = this.#queue
    const entries = this.entries
    let head = this.#head
    while (head < queue.length) {
      const key = queue[head] as K
      const moment = queue[head + 1] as number
      const current = this.#current(key, moment)
      if (current && entries.size <= this.#max && moment + this.#ttl >= now) break
      if (current) entries.delete(key)
      queue[head] = undefined
      head += 2
    }
    this.#head = head
    if (head > SLACK && head * 2 > queue.length) {
      this.#queue = queue.slice(head)
      this.#head = 0
    }
  }

  /** Rebuilds the queue of current records only, once replaced ones outnumber them. */
  #compact(): void {
    const queue = this.#queue
    const kept: unknown[] = []
    for (let i = this.#head; i < queue.length; i += 2) {
      if (this.#current(queue[i] as K, queue[i + 1] as number)) kept.push(queue[i], queue[i + 1])
    }
    this.#queue = kept
    this.#head = 0
  }
}

/** {@link ExpiryOrder} of bare keys: the Map holds each one's moment, nothing else. */
export class ExpiringSet<K> extends ExpiryOrder<K, number> {
  protected momentOf(slot: number): number {
    return slot
  }

  /** True if `key` was set and has not run out at `at`. */
  has(key: K, at: number): boolean {
    return this.live(key, this.moment(at)) !== undefined
  }

  /** Adds (or refreshes) the key, alive for `ttl` from `at`, and drops the oldest ones due. */
  add(key: K, at: number): void {
    const now = this.moment(at)
    this.entries.set(key, now)
    this.queue(key, now)
  }
}

interface Slot<V> {
  value: V
  moment: number
}

/** {@link ExpiryOrder} of keys each with a value. */
export class ExpiringMap<K, V> extends ExpiryOrder<K, Slot<V>> {
  protected momentOf(slot: Slot<V>): number {
    return slot.moment
  }

  /** The value under `key` if it is alive at `at`; an expired entry met here is dropped. */
  get(key: K, at: number): V | undefined {
    return this.live(key, this.moment(at))?.value
  }

  has(key: K, at: number): boolean {
    return this.live(key, this.moment(at)) !== undefined
  }

  /** Sets (or replaces) the entry, alive for `ttl` from `at`, and drops the oldest ones due. */
  set(key: K, value: V, at: number): void {
    const now = this.moment(at)
    this.entries.set(key, { value, moment: now })
    this.queue(key, now)
  }
}

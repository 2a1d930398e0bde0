interface Entry<K, V> {
  key: K
  value: V
  /** Last moment (ms, the store's clock) the entry is still alive. */
  until: number
}

/** Queue records kept in front of the oldest one before the queue is cut. */
const SLACK = 1024

/**
 * Keys each with a value, bounded in entries and in time: an entry is forgotten
 * `ttl` ms after it was last set and, past `max` entries, the one set longest ago
 * goes first. It starts empty and grows with use: nothing is allocated for `max`
 * up front, so creating one costs nothing at a cold start.
 *
 * Beside the Map, a queue holds every entry in the order it was set, which is
 * also the order of expiry (one ttl for all). Setting a key again makes a new
 * entry and leaves the old one in the queue, recognised as replaced when met.
 * Expired and surplus entries are dropped from the front of the queue when one is
 * set, and expired ones met on reading. (Walking the Map from its front instead
 * would skip every entry deleted there before, which grows with the Map.)
 * Every call takes the time `at` from its caller, which reads the clock once per
 * store operation.
 */
export class ExpiringMap<K, V> {
  readonly #entries = new Map<K, Entry<K, V>>()
  #queue: (Entry<K, V> | undefined)[] = []
  #head = 0
  readonly #max: number
  readonly #ttl: number

  constructor(max: number, ttl: number) {
    if (!Number.isSafeInteger(max) || max < 1) {
      throw new TypeError(`ExpiringMap: max must be a whole number >= 1; got ${max}`)
    }
    this.#max = max
    this.#ttl = ttl
  }

  get size(): number {
    return this.#entries.size
  }

  /** The value under `key` if it is alive at `at`; an expired entry met here is dropped. */
  get(key: K, at: number): V | undefined {
    const entry = this.#entries.get(key)
    if (entry === undefined) return undefined
    if (entry.until < at) {
      this.#entries.delete(key)
      return undefined
    }
    return entry.value
  }

  has(key: K, at: number): boolean {
    return this.get(key, at) !== undefined
  }

  /** Sets (or replaces) the entry, alive for `ttl` from `at`, and drops the oldest ones due. */
  set(key: K, value: V, at: number): void {
    const entry = { key, value, until: at + this.#ttl }
    this.#entries.set(key, entry)
    const queue = this.#queue
    queue.push(entry)
    const oldest = queue[this.#head] as Entry<K, V>
    if (this.#entries.size > this.#max || oldest.until < at) this.#trim(at)
    else if (queue.length - this.#head > 2 * this.#entries.size + SLACK) this.#compact()
  }

  /** Drops expired entries and those past `max`, and replaced ones, from the front. */
  #trim(at: number): void {
    const queue = this.#queue
    const entries = this.#entries
    let head = this.#head
    while (head < queue.length) {
      const entry = queue[head] as Entry<K, V>
      const live = entries.get(entry.key) === entry
      if (live && entries.size <= this.#max && entry.until >= at) break
      if (live) entries.delete(entry.key)
      queue[head++] = undefined
    }
    this.#head = head
    if (head > SLACK && head * 2 > queue.length) {
      this.#queue = queue.slice(head)
      this.#head = 0
    }
  }

  /** Rebuilds the queue of live entries only, once replaced ones outnumber them. */
  #compact(): void {
    const entries = this.#entries
    this.#queue = this.#queue
      .slice(this.#head)
      .filter((entry) => entry !== undefined && entries.get(entry.key) === entry)
    this.#head = 0
  }
}

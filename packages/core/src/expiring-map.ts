/**
 * A map whose entries expire `ttl` ms after they were last set, holding at most
 * `max` of them; past that the entry set longest ago goes first. Entries stay in
 * the order they were set (a Map keeps insertion order, and a set moves its key to
 * the end), so the oldest is always at the front and expiring is amortised O(1).
 * The memory store's two tables; cheaper than an LRU, whose recency bookkeeping
 * the store does not need (an entry only matters from its last write).
 */
export class ExpiringMap<K, V> {
  readonly #values = new Map<K, V>()
  readonly #expiresAt = new Map<K, number>()
  readonly #max: number
  readonly #ttl: number
  readonly #now: () => number

  constructor(options: { max: number; ttl: number; now: () => number }) {
    this.#max = options.max
    this.#ttl = options.ttl
    this.#now = options.now
  }

  get size(): number {
    return this.#values.size
  }

  /** The value, unless it is absent or has expired at `at`. */
  get(key: K, at: number = this.#now()): V | undefined {
    const expiresAt = this.#expiresAt.get(key)
    if (expiresAt === undefined) return undefined
    if (expiresAt <= at) {
      this.#expiresAt.delete(key)
      this.#values.delete(key)
      return undefined
    }
    return this.#values.get(key)
  }

  has(key: K, at: number = this.#now()): boolean {
    return this.get(key, at) !== undefined
  }

  set(key: K, value: V, at: number = this.#now()): void {
    const expiresAt = this.#expiresAt
    // Moved to the end: deleted first, since a Map keeps a re-set key in place.
    if (expiresAt.delete(key)) this.#values.delete(key)
    expiresAt.set(key, at + this.#ttl)
    this.#values.set(key, value)
    this.#trim(at)
  }

  /** Drops the entries that expired or are over `max`, oldest first. */
  #trim(at: number): void {
    const expiresAt = this.#expiresAt
    for (const [key, when] of expiresAt) {
      if (when > at && expiresAt.size <= this.#max) return
      expiresAt.delete(key)
      this.#values.delete(key)
    }
  }
}

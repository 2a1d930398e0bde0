import { describe, expect, it } from 'vitest'
import { ExpiringMap, ExpiringSet } from './expiring-map.js'
import { memoryStore } from './memory-store.js'

describe('ExpiringMap', () => {
  it('keeps a value until ttl after it was set, then forgets it', () => {
    const map = new ExpiringMap<string, number>(10, 1000)
    map.set('a', 1, 5000)
    expect(map.get('a', 5000)).toBe(1)
    expect(map.get('a', 6000)).toBe(1)
    expect(map.has('a', 6001)).toBe(false)
    expect(map.size).toBe(0)
  })

  it('forgets the entry set longest ago once past max', () => {
    const map = new ExpiringMap<string, true>(3, 1000)
    for (const key of ['a', 'b', 'c']) map.set(key, true, 0)
    map.set('a', true, 1) // refreshed: now the newest
    map.set('d', true, 2)
    expect(['a', 'b', 'c', 'd'].filter((key) => map.has(key, 3))).toEqual(['a', 'c', 'd'])
    expect(map.size).toBe(3)
  })

  it('drops expired entries from the front when one is set, so memory follows use', () => {
    const map = new ExpiringMap<number, number>(1_000, 1000)
    for (let i = 0; i < 500; i++) map.set(i, i, i)
    expect(map.size).toBe(500)
    // At 1200 every entry set before 200 has run out; setting one trims them.
    map.set(10_000, 1, 1200)
    expect(map.size).toBe(301)
    expect(map.get(199, 1200)).toBeUndefined()
    expect(map.get(200, 1200)).toBe(200)
  })

  it('refuses a max that is not a whole number >= 1', () => {
    expect(() => new ExpiringMap(0, 1)).toThrow(/max must be a whole number/)
    expect(() => new ExpiringMap(1.5, 1)).toThrow(/max must be a whole number/)
  })
})

describe('memoryStore start-up cost', () => {
  it('allocates nothing for its bounds before the first event', () => {
    // A store sized for a billion events: preallocating its entries would take
    // gigabytes (lru-cache's arrays did, for `max`), growing with use takes none.
    const before = process.memoryUsage().heapUsed
    const stores = Array.from({ length: 10 }, () =>
      memoryStore({ maxEvents: 1_000_000_000, maxConversions: 1_000_000_000 }),
    )
    const grown = process.memoryUsage().heapUsed - before
    expect(stores).toHaveLength(10)
    expect(grown).toBeLessThan(10 * 1024 * 1024)
  })
})

describe('ExpiringMap under steady use', () => {
  it('stays within max over many sets and keeps exactly the newest', () => {
    const map = new ExpiringMap<number, number>(1000, 1_000_000)
    for (let i = 0; i < 50_000; i++) map.set(i, i, i)
    expect(map.size).toBe(1000)
    expect(map.get(48_999, 50_000)).toBeUndefined()
    expect(map.get(49_000, 50_000)).toBe(49_000)
  })

  it('keeps a key set again many times once, with its newest value', () => {
    const map = new ExpiringMap<string, number>(10, 1_000_000)
    for (let i = 0; i < 20_000; i++) map.set(`k${i % 3}`, i, i)
    expect(map.size).toBe(3)
    expect(map.get('k2', 20_000)).toBe(19_997)
    // A fresh key past max pushes out the one set longest ago, not a replaced copy.
    for (let i = 0; i < 8; i++) map.set(`n${i}`, i, 20_000)
    expect(map.size).toBe(10)
    expect(map.has('k2', 20_001)).toBe(false)
    expect(map.get('k0', 20_001)).toBe(19_998)
    expect(map.get('k1', 20_001)).toBe(19_999)
  })
})

describe('ExpiringSet', () => {
  it('keeps a key until ttl after it was added, bounded by max, oldest out first', () => {
    const set = new ExpiringSet<string>(2, 1000)
    set.add('a', 5000)
    set.add('b', 5500)
    expect(set.has('a', 6000)).toBe(true)
    expect(set.has('a', 6001)).toBe(false)
    set.add('c', 6002)
    expect(set.size).toBe(2)
    expect(set.has('b', 6002)).toBe(true)
    set.add('b', 6100) // refreshed: now the newest, and alive for another ttl
    set.add('d', 6200)
    expect(['b', 'c', 'd'].filter((key) => set.has(key, 6300))).toEqual(['b', 'd'])
    expect(set.has('b', 7100)).toBe(true)
    expect(set.has('b', 7101)).toBe(false)
  })

  it('counts a key added twice in the same ms once, and still forgets it on time', () => {
    const set = new ExpiringSet<number>(10, 100)
    for (let i = 0; i < 1000; i++) set.add(7, 50)
    set.add(8, 60)
    expect(set.size).toBe(2)
    set.add(9, 151)
    expect(set.has(7, 151)).toBe(false)
    expect(set.has(8, 151)).toBe(true)
    expect(set.size).toBe(2)
  })
})

import { describe, expect, it } from 'vitest'
import { ExpiringMap } from './expiring-map.js'

describe('ExpiringMap', () => {
  it('forgets an entry ttl ms after it was last set, not after it was read', () => {
    let clock = 1000
    const map = new ExpiringMap<string, number>({ max: 10, ttl: 100, now: () => clock })
    map.set('a', 1)
    clock = 1099
    expect(map.get('a')).toBe(1)
    clock = 1100
    expect(map.get('a')).toBeUndefined()
    expect(map.has('a')).toBe(false)
    map.set('b', 2)
    clock = 1150
    map.set('b', 3)
    clock = 1240
    expect(map.get('b')).toBe(3)
  })

  it('holds at most max entries, dropping the one set longest ago', () => {
    const map = new ExpiringMap<number, number>({ max: 3, ttl: 1e9, now: () => 0 })
    for (const key of [1, 2, 3]) map.set(key, key)
    map.set(1, 10) // set again: now the newest
    map.set(4, 4)
    expect([1, 2, 3, 4].map((key) => map.has(key))).toEqual([true, false, true, true])
    expect(map.size).toBe(3)
  })

  it('clears expired entries as new ones come, so memory follows the live ones', () => {
    let clock = 0
    const map = new ExpiringMap<number, true>({ max: 1000, ttl: 10, now: () => clock })
    for (let i = 0; i < 500; i++) {
      clock = i
      map.set(i, true)
    }
    expect(map.size).toBeLessThanOrEqual(11)
  })
})

import { describe, expect, it } from 'vitest'
import { categorySlug, publisherPayout } from './catalogue.js'
import { allowlistEntryProblem, createAllowlist } from './ip-allowlist.js'

describe('categorySlug', () => {
  it('lowercases, decodes &, turns every run of other characters into _', () => {
    expect(categorySlug('Home &amp; Garden')).toBe('home_garden')
    expect(categorySlug('Home & Garden')).toBe('home_garden')
    expect(categorySlug('Food &#38; Drink')).toBe('food_drink')
    expect(categorySlug('Finance / Insurance')).toBe('finance_insurance')
    expect(categorySlug('Travel')).toBe('travel')
    expect(categorySlug('home_garden')).toBe('home_garden')
  })
})

describe('publisherPayout', () => {
  it('is 70% of the network rate as a two-decimal string, rounded half up, without binary fractions', () => {
    expect(publisherPayout('10')).toBe('7.00')
    expect(publisherPayout('8.5')).toBe('5.95')
    expect(publisherPayout('0.35')).toBe('0.25')
    expect(publisherPayout('0.05')).toBe('0.04')
    expect(publisherPayout('1.015')).toBe('0.71')
    expect(publisherPayout('123456.789')).toBe('86419.75')
    expect(publisherPayout('0')).toBe('0.00')
    expect(() => publisherPayout('-1')).toThrow(TypeError)
  })
})

describe('IP allowlist', () => {
  it('checks entries: addresses and CIDR ranges of either family', () => {
    for (const entry of ['10.0.0.1', '10.0.0.0/8', '::1', '2001:db8::/32', '0.0.0.0/0']) {
      expect(allowlistEntryProblem(entry), entry).toBeUndefined()
    }
    for (const entry of ['10.0.0.0/33', '::/129', 'example.com', '10.0.0.0/8/1', '10.0.0.0/x']) {
      expect(allowlistEntryProblem(entry), entry).toMatch(/not|outside/)
    }
  })

  it('matches IPv4, IPv6, ranges, and an IPv4 client seen as ::ffff:a.b.c.d', () => {
    const allows = createAllowlist(['192.168.1.7', '10.0.0.0/8', '2001:db8::/32', '::1'])
    expect(
      ['192.168.1.7', '10.200.3.4', '2001:db8::5', '::1', '::ffff:10.1.2.3'].every(allows),
    ).toBe(true)
    expect(['192.168.1.8', '11.0.0.1', '2001:db9::1', '::2', 'nonsense'].some(allows)).toBe(false)
  })
})

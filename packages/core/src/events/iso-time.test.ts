import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isoTimeMicros } from './iso-time.js'

describe('isoTimeMicros', () => {
  it('agrees with Date.parse on every valid time with a zone', () => {
    const time = fc.date({
      // Every year the parser takes: the day count is arithmetic, not Date.UTC.
      min: new Date('1000-01-01T00:00:00Z'),
      max: new Date('9999-12-30T00:00:00Z'),
      noInvalidDate: true,
    })
    const zone = fc.oneof(
      fc.constant('Z'),
      fc
        .tuple(
          fc.constantFrom('+', '-'),
          fc.integer({ min: 0, max: 14 }),
          fc.constantFrom(0, 30, 45),
          fc.boolean(),
        )
        .map(
          ([sign, h, m, colon]) =>
            `${sign}${String(h).padStart(2, '0')}${colon ? ':' : ''}${String(m).padStart(2, '0')}`,
        ),
    )
    const fraction = fc.constantFrom('', '.5', '.123', '.123456', '.123456789')
    fc.assert(
      fc.property(time, zone, fraction, fc.boolean(), (date, z, frac, withSeconds) => {
        const base = date.toISOString().slice(0, withSeconds ? 19 : 16)
        const text = `${base}${withSeconds ? frac : ''}${z}`
        expect(Math.floor(isoTimeMicros(text) / 1000)).toBe(Date.parse(text))
      }),
      { numRuns: 2000 },
    )
  })

  it.each([
    '2026-11-20',
    '2026-11-20T10:00:00',
    '2026-13-01T10:00:00Z',
    '2026-02-29T10:00:00Z',
    '2026-04-31T10:00:00Z',
    '2026-11-20T24:00:00Z',
    '2026-11-20T10:60:00Z',
    '2026-11-20T10:00:60Z',
    '2026-11-20T10:00:00.Z',
    '2026-11-20T10:00:00.1234567890Z',
    '2026-11-20T10:00:00+25:00',
    '2026-11-20T10:00:00+01:00x',
    '2026-11-20T10:00:00+1',
    '2026-11-20T10:00+1',
    '2026-11-20T10:00:5Z',
    '2026-11-20T10:00:',
    '2026-11-20X10:00:00Z',
    '2026-11-20T10:00:00Zjunk',
    '0999-11-20T10:00:00Z',
    '20x6-11-20T10:00:00Z',
    '2x26-11-20T10:00:00Z',
    '2026-1x-20T10:00:00Z',
    'yesterday at noon, roughly',
  ])('refuses %s', (text) => {
    expect(isoTimeMicros(text)).toBeNaN()
  })

  it('accepts a leap day and refuses anything but a string', () => {
    expect(isoTimeMicros('2028-02-29T00:00:00Z')).toBe(Date.UTC(2028, 1, 29) * 1000)
    expect(isoTimeMicros(1_700_000_000_000)).toBeNaN()
    expect(isoTimeMicros(null)).toBeNaN()
  })

  it('keeps microseconds, so events within one millisecond still order', () => {
    const a = isoTimeMicros('2026-11-20T10:00:01.1231Z')
    const b = isoTimeMicros('2026-11-20T10:00:01.1239Z')
    expect(b - a).toBe(800)
    expect(isoTimeMicros('2026-11-20T10:00:01.123456789Z') % 1000).toBe(456)
  })

  it('tolerates a lowercase or space separator, a lowercase z and an hours-only offset', () => {
    const utc = isoTimeMicros('2026-11-20T10:00:00Z')
    expect(isoTimeMicros('2026-11-20t10:00:00z')).toBe(utc)
    expect(isoTimeMicros('2026-11-20 10:00:00Z')).toBe(utc)
    expect(isoTimeMicros('2026-11-20T11:00:00+01')).toBe(utc)
  })
})

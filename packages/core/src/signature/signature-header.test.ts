import { describe, expect, it } from 'vitest'
import { isWebhookError } from '../errors.js'
import { MAX_SIGNATURE_HEADER_LENGTH, parseSignatureHeader } from './signature-header.js'

const HEX = 'ab'.repeat(32)
const HEX2 = 'cd'.repeat(32)

const codeOf = (value: string) => {
  try {
    parseSignatureHeader(value)
    return 'ok'
  } catch (error) {
    return isWebhookError(error) ? error.code : 'threw something else'
  }
}

describe('parseSignatureHeader', () => {
  it('reads t and v1', () => {
    expect(parseSignatureHeader(`t=1700000000,v1=${HEX}`)).toEqual({
      timestamp: 1700000000,
      timestampText: '1700000000',
      signatures: [HEX],
    })
  })

  it('accepts keys in any order, spaces, several v1 and unknown keys', () => {
    const parsed = parseSignatureHeader(
      ` v1=${HEX} , v0=zzz,t = 1700000000 ,v1=${HEX2.toUpperCase()},`,
    )
    expect(parsed.timestampText).toBe('1700000000')
    expect(parsed.signatures).toEqual([HEX, HEX2])
  })

  it('keeps t exactly as sent, because that text is what was signed', () => {
    expect(parseSignatureHeader(`t=0001700000000,v1=${HEX}`).timestampText).toBe('0001700000000')
  })

  it.each([
    ['no t', `v1=${HEX}`],
    ['no v1', 't=1700000000'],
    ['t twice with different values', `t=1,t=2,v1=${HEX}`],
    ['t twice, the same number written differently', `t=1,t=01,v1=${HEX}`],
    ['t not a number', `t=abc,v1=${HEX}`],
    ['t negative', `t=-5,v1=${HEX}`],
    ['t fractional', `t=1.5,v1=${HEX}`],
    ['v1 not hex', 't=1,v1=xyz'],
    ['v1 empty', 't=1,v1='],
    ['every v1 not hex', 't=1,v1=potato,v1=,v1=zz'],
    ['only parts without =', 'garbage,potato'],
    ['empty header', ''],
    ['a Stripe-style header with a scheme name', `sha256=${HEX}`],
    ['a header over the length cap', `t=1,v1=${HEX},x=${'a'.repeat(MAX_SIGNATURE_HEADER_LENGTH)}`],
  ])('refuses %s as malformed_signature', (_name, value) => {
    expect(codeOf(value)).toBe('malformed_signature')
  })

  it('skips a v1 value that is not hex and keeps the usable ones beside it', () => {
    // stripe-node's own tests send a malformed v1 beside the matching one.
    expect(parseSignatureHeader(`t=1700000000,v1=potato,v1=${HEX}`).signatures).toEqual([HEX])
    expect(parseSignatureHeader(`v1=${HEX2},t=1700000000,v1=`).signatures).toEqual([HEX2])
  })

  it('skips a part without = as it skips an unknown key', () => {
    expect(parseSignatureHeader(`t=1,v1=${HEX},potato`).signatures).toEqual([HEX])
    expect(parseSignatureHeader(`garbage,t=1,v1=${HEX}`).timestampText).toBe('1')
  })

  it('does not count v1 values that are not hex toward anything', () => {
    const potatoes = Array.from({ length: 8 }, () => 'v1=potato').join(',')
    expect(parseSignatureHeader(`t=1,${potatoes},v1=${HEX}`).signatures).toEqual([HEX])
  })

  it('keeps every hex v1, however many, so the matching one is compared', () => {
    const others = Array.from({ length: 8 }, () => `v1=${HEX2}`)
    const parsed = parseSignatureHeader(`t=1,${others.join(',')},v1=${HEX}`)
    expect(parsed.signatures).toHaveLength(9)
    expect(parsed.signatures.at(-1)).toBe(HEX)
  })

  it('takes a t repeated with the same text once (a proxy that repeated the header)', () => {
    // Node joins a repeated header with ", ".
    expect(parseSignatureHeader(`t=1700000000,v1=${HEX}, t=1700000000,v1=${HEX2}`)).toEqual({
      timestamp: 1700000000,
      timestampText: '1700000000',
      signatures: [HEX, HEX2],
    })
  })

  it('accepts a header of up to 8192 characters', () => {
    const padding = `x=${'a'.repeat(5000)}`
    expect(codeOf(`t=1,v1=${HEX},${padding}`)).toBe('ok')
    const longest = `t=1,v1=${HEX},x=`.padEnd(MAX_SIGNATURE_HEADER_LENGTH, 'a')
    expect(longest).toHaveLength(8192)
    expect(codeOf(longest)).toBe('ok')
    expect(codeOf(`${longest}a`)).toBe('malformed_signature')
  })

  it('walks a longest-allowed header of many parts quickly', () => {
    // Just under the length cap, every part a valid unknown key: the whole loop runs.
    const hostile = `${'x=1,'.repeat(4096)}t=1,v1=${HEX}`.slice(-MAX_SIGNATURE_HEADER_LENGTH)
    expect(hostile.length).toBeLessThanOrEqual(MAX_SIGNATURE_HEADER_LENGTH)
    expect(codeOf(hostile)).toBe('ok')
    const started = performance.now()
    for (let i = 0; i < 1000; i++) codeOf(hostile)
    // Not a timing assertion on the machine, only a bound against a pathological loop.
    expect(performance.now() - started).toBeLessThan(5000)
  })
})

import { describe, expect, it } from 'vitest'
import { isWebhookError } from './errors.js'
import { MAX_SIGNATURES, parseSignatureHeader } from './signature-header.js'

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
    ['t twice', `t=1,t=2,v1=${HEX}`],
    ['t not a number', `t=abc,v1=${HEX}`],
    ['t negative', `t=-5,v1=${HEX}`],
    ['t fractional', `t=1.5,v1=${HEX}`],
    ['v1 not hex', 't=1,v1=xyz'],
    ['v1 empty', 't=1,v1='],
    ['every v1 not hex', 't=1,v1=potato,v1=,v1=zz'],
    ['a part without =', `t=1,v1=${HEX},garbage`],
    ['empty header', ''],
    ['a Stripe-style header with a scheme name', `sha256=${HEX}`],
    [
      'too many v1',
      `t=1,${Array.from({ length: MAX_SIGNATURES + 1 }, () => `v1=${HEX}`).join(',')}`,
    ],
    ['an overlong header', `t=1,v1=${HEX},x=${'a'.repeat(5000)}`],
  ])('refuses %s as malformed_signature', (_name, value) => {
    expect(codeOf(value)).toBe('malformed_signature')
  })

  it('skips a v1 value that is not hex and keeps the usable ones beside it', () => {
    // stripe-node's own tests send a malformed v1 beside the matching one.
    expect(parseSignatureHeader(`t=1700000000,v1=potato,v1=${HEX}`).signatures).toEqual([HEX])
    expect(parseSignatureHeader(`v1=${HEX2},t=1700000000,v1=`).signatures).toEqual([HEX2])
  })

  it('counts v1 values that are not hex toward the limit', () => {
    const value = `t=1,${Array.from({ length: MAX_SIGNATURES }, () => 'v1=potato').join(',')},v1=${HEX}`
    expect(codeOf(value)).toBe('malformed_signature')
  })

  it('accepts exactly the maximum number of v1 values', () => {
    const value = `t=1,${Array.from({ length: MAX_SIGNATURES }, () => `v1=${HEX}`).join(',')}`
    expect(codeOf(value)).toBe('ok')
  })

  it('walks a longest-allowed header of many parts quickly', () => {
    // Just under the length cap, every part a valid unknown key: the whole loop runs.
    const hostile = `${'x=1,'.repeat(1000)}t=1,v1=${HEX}`.slice(-4096)
    expect(hostile.length).toBeLessThanOrEqual(4096)
    expect(codeOf(hostile)).toBe('ok')
    const started = performance.now()
    for (let i = 0; i < 1000; i++) codeOf(hostile)
    // Not a timing assertion on the machine, only a bound against a pathological loop.
    expect(performance.now() - started).toBeLessThan(5000)
  })
})

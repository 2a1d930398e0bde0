import { createHmac } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { platform as nodePlatform } from './node.js'
import { platform as webPlatform } from './web.js'

const reference = (secret: string, prefix: string, body: Uint8Array) =>
  createHmac('sha256', secret).update(prefix).update(body).digest('hex')

describe('node:crypto and Web Crypto platforms', () => {
  it('sign the same bytes identically, matching a plain node:crypto HMAC', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ minLength: 1 }),
        fc.nat(),
        fc.uint8Array({ maxLength: 2000 }),
        async (secret, t, body) => {
          const prefix = `${t}.`
          const expected = reference(secret, prefix, body)
          expect(await nodePlatform.sign(secret, prefix, body)).toBe(expected)
          expect(await webPlatform.sign(secret, prefix, body)).toBe(expected)
        },
      ),
      { numRuns: 200 },
    )
  })

  it('node: the small-body HMAC (one-shot hashes over the key pads) equals node:crypto HMAC, both sides of its size limit', async () => {
    await fc.assert(
      fc.asyncProperty(
        // Keys shorter and longer than SHA-256's 64-byte block, non-ASCII included.
        fc.oneof(
          fc.string({ minLength: 1, maxLength: 200 }),
          fc.string({ unit: 'grapheme', minLength: 1, maxLength: 80 }),
        ),
        fc.oneof(
          fc.nat().map((t) => `${t}.`),
          fc.string({ unit: 'grapheme', maxLength: 12 }),
        ),
        fc.oneof(
          fc.uint8Array({ maxLength: 1100 }),
          fc.uint8Array({ minLength: 1020, maxLength: 1030 }),
        ),
        async (secret, prefix, body) => {
          const expected = reference(secret, prefix, body)
          expect(await nodePlatform.sign(secret, prefix, body)).toBe(expected)
          const bytes = Buffer.from(expected, 'hex')
          expect(nodePlatform.verify([secret], prefix, body, [bytes])).toBe(true)
          const wrong = Buffer.from(bytes)
          wrong[0] = (wrong[0] as number) ^ 1
          expect(nodePlatform.verify([secret], prefix, body, [wrong])).toBe(false)
        },
      ),
      { numRuns: 500 },
    )
  })

  it('give the same verify answers on the same cases', async () => {
    const body = new TextEncoder().encode('{"id":"evt_1"}')
    const good = reference('whsec_a', '1.', body)
    const cases: [string[], string[], boolean][] = [
      [['whsec_a'], [good], true],
      [['whsec_b'], [good], false],
      [['whsec_b', 'whsec_a'], [good], true],
      [['whsec_a'], ['0'.repeat(64), good], true],
      [['whsec_a'], ['0'.repeat(64)], false],
      [['whsec_a'], [good.slice(0, 62)], false],
      [['whsec_a'], [`${good}00`], false],
    ]
    for (const [secrets, candidates, expected] of cases) {
      for (const platform of [nodePlatform, webPlatform]) {
        const bytes = candidates.flatMap((hex) => platform.signatureBytes(hex) ?? [])
        expect(await platform.verify(secrets, '1.', body, bytes)).toBe(expected)
      }
    }
  })

  it('decode a v1 of 64 hex digits in either case, and nothing else', () => {
    const hex = reference('whsec_a', '1.', new Uint8Array([1, 2, 3]))
    const not = [
      hex.slice(0, 62),
      `${hex}00`,
      `${hex.slice(0, 10)}g${hex.slice(11)}`,
      `${hex.slice(0, 63)}x`,
      `zz${hex.slice(2)}`,
      ' '.repeat(64),
      `${hex.slice(0, 62)}:;`,
      `${hex.slice(0, 62)}@G`,
    ]
    for (const platform of [nodePlatform, webPlatform]) {
      expect(Buffer.from(platform.signatureBytes(hex) as Uint8Array).toString('hex')).toBe(hex)
      expect(
        Buffer.from(platform.signatureBytes(hex.toUpperCase()) as Uint8Array).toString('hex'),
      ).toBe(hex)
      for (const value of not) expect(platform.signatureBytes(value)).toBeUndefined()
    }
  })

  it('decode UTF-8 the same way, including a Buffer slice and invalid bytes', () => {
    const text = 'Café 東京 🎉'
    const bytes = Buffer.from(`xx${text}yy`).subarray(2, -2)
    expect(nodePlatform.utf8Decode(bytes)).toBe(text)
    expect(webPlatform.utf8Decode(bytes)).toBe(text)
    const invalid = new Uint8Array([0x7b, 0xff, 0x7d])
    expect(nodePlatform.utf8Decode(invalid)).toBe(webPlatform.utf8Decode(invalid))
  })
})

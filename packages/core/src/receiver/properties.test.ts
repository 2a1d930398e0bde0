import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { verifyEvent } from '../signature/verify.js'
import { buildConversionEvent, signPayload } from '../testing/index.js'
import { createReceiver } from './create-receiver.js'

const SECRET = 'whsec_property_secret_0123456789'
// After every createdAt the tests stamp (now, or fixed 2026 dates): an event is never signed before it was created.
const NOW = 2_000_000_000
const now = () => NOW * 1000
const enc = (text: string) => new TextEncoder().encode(text)

const conversionEvent = fc
  .record({
    id: fc.integer({ min: 1, max: 2 ** 40 }),
    status: fc.constantFrom(
      'pending',
      'approved',
      'available',
      'ready_for_payout',
      'rejected',
      'future_status',
    ),
    saleAmount: fc.option(fc.stringMatching(/^\d{1,6}\.\d{2}$/), { nil: null }),
    note: fc.string({ unit: 'grapheme', maxLength: 40 }),
  })
  .map(({ id, status, saleAmount, note }) => {
    const event = buildConversionEvent({ conversion: { id, status, saleAmount } })
    return JSON.stringify({ ...event, data: { ...event.data, note } })
  })

async function outcome(header: string, body: Uint8Array): Promise<string> {
  try {
    await verifyEvent({
      headers: { 'service-signature': header },
      rawBody: body,
      secret: SECRET,
      now,
    })
    return 'ok'
  } catch (error) {
    return (error as { code?: string }).code ?? 'threw'
  }
}

describe('properties', () => {
  it('verify(sign(x)) always holds', async () => {
    await fc.assert(
      fc.asyncProperty(conversionEvent, fc.integer({ min: -300, max: 300 }), async (body, skew) => {
        const header = await signPayload({ secret: SECRET, payload: body, timestamp: NOW + skew })
        expect(await outcome(header, enc(body))).toBe('ok')
      }),
      { numRuns: 300 },
    )
  })

  it('any change to one byte of the body is rejected', async () => {
    await fc.assert(
      fc.asyncProperty(
        conversionEvent,
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        async (body, at, flip) => {
          const header = await signPayload({ secret: SECRET, payload: body, timestamp: NOW })
          const bytes = enc(body)
          const index = at % bytes.length
          bytes[index] = (bytes[index] as number) ^ flip
          expect(await outcome(header, bytes)).toBe('signature_mismatch')
        },
      ),
      { numRuns: 300 },
    )
  })

  it('any other t is rejected', async () => {
    await fc.assert(
      fc.asyncProperty(
        conversionEvent,
        fc.integer({ min: -200, max: 200 }).filter((d) => d !== 0),
        async (body, delta) => {
          const header = await signPayload({ secret: SECRET, payload: body, timestamp: NOW })
          const moved = header.replace(`t=${NOW}`, `t=${NOW + delta}`)
          expect(await outcome(moved, enc(body))).toBe('signature_mismatch')
        },
      ),
      { numRuns: 200 },
    )
  })

  it('any change to v1 is rejected', async () => {
    await fc.assert(
      fc.asyncProperty(
        conversionEvent,
        fc.nat({ max: 63 }),
        fc.constantFrom(...'0123456789abcdefABCDEF'),
        async (body, at, digit) => {
          const header = await signPayload({ secret: SECRET, payload: body, timestamp: NOW })
          const v1 = header.slice(header.indexOf('v1=') + 3)
          fc.pre(v1[at] !== digit.toLowerCase())
          const changed = `t=${NOW},v1=${v1.slice(0, at)}${digit}${v1.slice(at + 1)}`
          expect(await outcome(changed, enc(body))).toBe('signature_mismatch')
        },
      ),
      { numRuns: 200 },
    )
  })

  it('no input makes receive() throw; every answer is a status with a JSON body free of secrets', async () => {
    const receiver = createReceiver({ secret: SECRET, now, onConversion: () => {} })
    const headerValue = fc.oneof(
      fc.string(),
      fc.constant(`t=${NOW},v1=${'a'.repeat(64)}`),
      fc.tuple(fc.string(), fc.string()).map(([a, b]) => `t=${a},v1=${b}`),
    )
    const headers = fc.dictionary(
      fc.constantFrom(
        'service-signature',
        'Service-Signature',
        'service-event-id',
        'service-delivery-attempt',
        'x',
      ),
      fc.oneof(headerValue, fc.array(fc.string(), { maxLength: 3 })),
    )
    const body = fc.oneof(fc.uint8Array({ maxLength: 300 }), conversionEvent.map(enc))
    await fc.assert(
      fc.asyncProperty(headers, body, fc.boolean(), async (h, raw, signIt) => {
        const input = { headers: { ...h } as Record<string, string>, rawBody: raw }
        if (signIt)
          input.headers['service-signature'] = await signPayload({
            secret: SECRET,
            payload: raw,
            timestamp: NOW,
          })
        const result = await receiver.receive(input)
        expect(Number.isInteger(result.status)).toBe(true)
        expect(() => JSON.parse(result.body)).not.toThrow()
        expect(result.body).not.toContain(SECRET)
        expect(result.body.length).toBeLessThan(500)
      }),
      { numRuns: 500 },
    )
  })
})

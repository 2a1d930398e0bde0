import Stripe from 'stripe'
import { describe, expect, it } from 'vitest'
import { isWebhookError, type WebhookErrorCode } from '../errors.js'
import {
  buildConversionEvent,
  buildTestEvent,
  signedDelivery,
  signPayload,
} from '../testing/index.js'
import { verifyEvent } from './verify.js'

const SECRET = 'whsec_test_5f2b8c1d9e7a4b3c'
// After every createdAt the tests stamp (now, or fixed 2026 dates): an event is never signed before it was created.
const NOW = 2_000_000_000
const now = () => NOW * 1000
const stripe = new Stripe('sk_test_unused')

const enc = (text: string) => new TextEncoder().encode(text)

async function delivery(event: object | string, { timestamp = NOW, secret = SECRET } = {}) {
  const signed = await signedDelivery({ secret, event, timestamp })
  return { headers: signed.headers, rawBody: enc(signed.body), body: signed.body }
}

async function codeOf(promise: Promise<unknown>): Promise<WebhookErrorCode | 'ok'> {
  try {
    await promise
    return 'ok'
  } catch (error) {
    if (isWebhookError(error)) return error.code
    throw error
  }
}

const verify = (
  input: { headers: Record<string, string>; rawBody: Uint8Array },
  secret: string | string[] = SECRET,
) => verifyEvent({ ...input, secret, now })

describe('signatures agree with an independent implementation (Stripe)', () => {
  it('Stripe verifies what signPayload signs, byte for byte', async () => {
    const body = JSON.stringify(buildConversionEvent())
    const header = await signPayload({ secret: SECRET, payload: body, timestamp: NOW })
    const expected = stripe.webhooks.generateTestHeaderString({
      payload: body,
      secret: SECRET,
      timestamp: NOW,
    })
    expect(header).toBe(expected)
    expect(stripe.webhooks.constructEvent(body, header, SECRET, 1e12)).toEqual(JSON.parse(body))
  })

  it('verifyEvent accepts what Stripe signs, including multi-byte UTF-8', async () => {
    const event = buildConversionEvent({ conversion: { currency: 'EUR', saleAmount: '12.00' } })
    const body = JSON.stringify({ ...event, data: { ...event.data, note: 'Café – 東京 – 🎉' } })
    const header = stripe.webhooks.generateTestHeaderString({
      payload: body,
      secret: SECRET,
      timestamp: NOW,
    })
    const result = await verify({ headers: { 'service-signature': header }, rawBody: enc(body) })
    expect(result.id).toBe(event.id)
  })
})

describe('verifyEvent', () => {
  it('returns the typed event for a valid delivery', async () => {
    const event = buildConversionEvent({ conversion: { id: 77, status: 'approved' } })
    const verified = await verify(await delivery(event))
    expect(verified).toEqual(event)
  })

  it('reads headers given as a Web Headers object or with mixed-case keys', async () => {
    const d = await delivery(buildConversionEvent())
    expect(await codeOf(verify({ ...d, headers: new Headers(d.headers) as never }))).toBe('ok')
    const mixed = { 'Service-Signature': d.headers['service-signature'] as string }
    expect(await codeOf(verify({ ...d, headers: mixed }))).toBe('ok')
  })

  it('refuses one changed byte with signature_mismatch', async () => {
    const d = await delivery(buildConversionEvent())
    const tampered = new Uint8Array(d.rawBody)
    tampered[20] = (tampered[20] as number) ^ 1
    expect(await codeOf(verify({ ...d, rawBody: tampered }))).toBe('signature_mismatch')
  })

  it('refuses a re-serialised body (same JSON, other bytes)', async () => {
    const d = await delivery(buildConversionEvent())
    const pretty = enc(JSON.stringify(JSON.parse(d.body), null, 2))
    expect(await codeOf(verify({ ...d, rawBody: pretty }))).toBe('signature_mismatch')
  })

  it('refuses a trailing newline added to the body', async () => {
    const d = await delivery(buildConversionEvent())
    expect(await codeOf(verify({ ...d, rawBody: enc(`${d.body}\n`) }))).toBe('signature_mismatch')
  })

  it('refuses a signature keyed with the secret without its whsec_ prefix', async () => {
    const d = await delivery(buildConversionEvent(), { secret: SECRET.slice('whsec_'.length) })
    expect(await codeOf(verify(d))).toBe('signature_mismatch')
  })

  it('refuses a wrong secret', async () => {
    const d = await delivery(buildConversionEvent(), { secret: 'whsec_other' })
    expect(await codeOf(verify(d))).toBe('signature_mismatch')
  })

  it.each([
    [299, 'ok'],
    [300, 'ok'],
    [301, 'timestamp_outside_tolerance'],
    [-299, 'ok'],
    [-301, 'timestamp_outside_tolerance'],
  ])('t %i s in the past gives %s', async (age, code) => {
    const d = await delivery(buildConversionEvent(), { timestamp: NOW - age })
    expect(await codeOf(verify(d))).toBe(code)
  })

  it('honours a configured tolerance', async () => {
    const d = await delivery(buildConversionEvent(), { timestamp: NOW - 20 })
    expect(await codeOf(verifyEvent({ ...d, secret: SECRET, now, tolerance: 10 }))).toBe(
      'timestamp_outside_tolerance',
    )
  })

  it('checks the signature before the timestamp, so an old forgery says mismatch', async () => {
    const d = await delivery(buildConversionEvent(), { timestamp: NOW - 10_000, secret: 'whsec_x' })
    expect(await codeOf(verify(d))).toBe('signature_mismatch')
  })

  it('says missing_signature without the header, and for an empty one', async () => {
    const d = await delivery(buildConversionEvent())
    expect(await codeOf(verify({ ...d, headers: {} }))).toBe('missing_signature')
    expect(await codeOf(verify({ ...d, headers: { 'service-signature': ' ' } }))).toBe(
      'missing_signature',
    )
  })

  it('says malformed_signature for a header of the wrong shape', async () => {
    const d = await delivery(buildConversionEvent())
    expect(await codeOf(verify({ ...d, headers: { 'service-signature': 'v1=abc' } }))).toBe(
      'malformed_signature',
    )
  })

  it('accepts several v1 values when one matches', async () => {
    const d = await delivery(buildConversionEvent())
    const good = d.headers['service-signature'] as string
    const [t, v1] = good.split(',')
    const headers = { 'service-signature': `${t},v1=${'0'.repeat(64)},${v1},v1=${'f'.repeat(64)}` }
    expect(await codeOf(verify({ ...d, headers }))).toBe('ok')
  })

  it('accepts a matching v1 beside a malformed one, as Stripe does (v1=potato)', async () => {
    const event = buildConversionEvent()
    const d = await delivery(event)
    const [t, v1] = (d.headers['service-signature'] as string).split(',')
    const potato = `${t},v1=potato,${v1}`
    // Stripe's constructEvent takes it (stripe-node's own tests send it).
    expect(stripe.webhooks.constructEvent(d.body, potato, SECRET, 1e12).id).toBe(event.id)
    for (const header of [potato, `${v1},v1=,${t}`, `${t},${v1},v1=xyz`]) {
      expect(await codeOf(verify({ ...d, headers: { 'service-signature': header } }))).toBe('ok')
    }
  })

  it('says malformed_signature only when no v1 is usable', async () => {
    const d = await delivery(buildConversionEvent())
    const [t] = (d.headers['service-signature'] as string).split(',')
    for (const header of [`${t},v1=potato`, `${t},v1=potato,v1=`, t as string]) {
      const headers = { 'service-signature': header }
      expect(await codeOf(verify({ ...d, headers }))).toBe('malformed_signature')
    }
    // A usable v1 that does not match is a mismatch, not malformed.
    const headers = { 'service-signature': `${t},v1=potato,v1=${'0'.repeat(64)}` }
    expect(await codeOf(verify({ ...d, headers }))).toBe('signature_mismatch')
  })

  it.each([
    ['a part without =', (t: string, v1: string) => `${t},${v1},potato`],
    [
      'eight v1 values that are not hex before the match',
      (t: string, v1: string) => `${t},${'v1=potato,'.repeat(8)}${v1}`,
    ],
    [
      'nine hex v1 values, the last one matching',
      (t: string, v1: string) => `${t},${`v1=${'0'.repeat(64)},`.repeat(8)}${v1}`,
    ],
    [
      'a header over 4096 characters',
      (t: string, v1: string) => `${t},${v1},x=${'a'.repeat(5000)}`,
    ],
    [
      'the header repeated by a proxy (t twice, same text)',
      (t: string, v1: string) => `${t},${v1}, ${t},${v1}`,
    ],
  ])('accepts a matching v1 in %s, as Stripe does', async (_name, shape) => {
    const event = buildConversionEvent()
    const d = await delivery(event)
    const [t, v1] = (d.headers['service-signature'] as string).split(',') as [string, string]
    const header = shape(t, v1)
    expect(stripe.webhooks.constructEvent(d.body, header, SECRET, 1e12).id).toBe(event.id)
    expect(await codeOf(verify({ ...d, headers: { 'service-signature': header } }))).toBe('ok')
  })

  it('refuses a t given twice with different values as malformed_signature', async () => {
    const d = await delivery(buildConversionEvent())
    const [t, v1] = (d.headers['service-signature'] as string).split(',')
    const headers = { 'service-signature': `t=${NOW - 5},${t},${v1}` }
    expect(await codeOf(verify({ ...d, headers }))).toBe('malformed_signature')
  })

  it('refuses several v1 values when none matches', async () => {
    const d = await delivery(buildConversionEvent())
    const [t] = (d.headers['service-signature'] as string).split(',')
    const headers = { 'service-signature': `${t},v1=${'0'.repeat(64)},v1=${'f'.repeat(64)}` }
    expect(await codeOf(verify({ ...d, headers }))).toBe('signature_mismatch')
  })

  it('accepts either secret while rotating', async () => {
    const next = 'whsec_next_secret'
    const oldSigned = await delivery(buildConversionEvent())
    const newSigned = await delivery(buildConversionEvent(), { secret: next })
    expect(await codeOf(verify(oldSigned, [next, SECRET]))).toBe('ok')
    expect(await codeOf(verify(newSigned, [next, SECRET]))).toBe('ok')
    expect(await codeOf(verify(newSigned, [SECRET]))).toBe('signature_mismatch')
  })

  it('says malformed_json for a validly signed body that is not JSON', async () => {
    expect(await codeOf(verify(await delivery('{"id": "evt_1", oops')))).toBe('malformed_json')
  })

  it.each([
    ['an array', []],
    ['id without evt_', { ...buildTestEvent(), id: 'abc' }],
    ['no type', { ...buildTestEvent(), type: undefined }],
    ['createdAt not a time', { ...buildTestEvent(), createdAt: 'yesterday' }],
    ['createdAt without zone', { ...buildTestEvent(), createdAt: '2026-11-20T10:00:00' }],
    ['createdAt impossible date', { ...buildTestEvent(), createdAt: '2026-13-45T10:00:00Z' }],
    ['data a string', { ...buildTestEvent(), data: 'x' }],
    ['conversion event without data', { ...buildConversionEvent(), data: undefined }],
    ['conversion missing', { ...buildConversionEvent(), data: {} }],
    ['conversion id a string', buildConversionEvent({ conversion: { id: '5' as never } })],
    ['conversion id fractional', buildConversionEvent({ conversion: { id: 5.5 } })],
    ['status missing', buildConversionEvent({ conversion: { status: undefined as never } })],
    ['saleAmount a number', buildConversionEvent({ conversion: { saleAmount: 12.5 as never } })],
    ['programId a string', buildConversionEvent({ conversion: { programId: '1' as never } })],
    [
      'occurredAt a number',
      buildConversionEvent({ conversion: { occurredAt: 1700000000 as never } }),
    ],
  ])('says invalid_payload for %s', async (_name, body) => {
    expect(await codeOf(verify(await delivery(body)))).toBe('invalid_payload')
  })

  it('reads absent nullable conversion fields as null', async () => {
    const body = {
      id: 'evt_min',
      type: 'conversion.created',
      createdAt: '2026-11-20T10:00:00Z',
      data: { conversion: { id: 1, status: 'pending' } },
    }
    const event = await verify(await delivery(body))
    expect(event).toMatchObject({
      data: {
        conversion: {
          programId: null,
          channelId: null,
          saleAmount: null,
          commission: null,
          currency: null,
          occurredAt: null,
        },
      },
    })
  })

  it('accepts a webhook.test without data, whose shape the spec does not show', async () => {
    const { data: _data, ...bare } = buildTestEvent()
    expect((await verify(await delivery(bare))).data).toEqual({})
  })

  describe('the tolerance, in whole seconds of the clock', () => {
    const at = async (age: number, nowMs: number, tolerance?: number) => {
      const d = await delivery(buildConversionEvent(), {
        timestamp: Math.floor(nowMs / 1000) - age,
      })
      return codeOf(verifyEvent({ ...d, secret: SECRET, tolerance, now: () => nowMs }))
    }
    // Late in the clock's second, where comparing now / 1000 unrounded refused 300.
    const late = NOW * 1000 + 999

    it.each([
      [300, 'ok'],
      [-300, 'ok'],
      [301, 'timestamp_outside_tolerance'],
      [-301, 'timestamp_outside_tolerance'],
    ])('t %i s before the current second at tolerance 300 gives %s', async (age, code) => {
      expect(await at(age, late)).toBe(code)
      expect(await at(age, NOW * 1000)).toBe(code)
    })

    it('tolerance 0 accepts t of the current second and refuses the one before and after', async () => {
      expect(await at(0, late, 0)).toBe('ok')
      expect(await at(1, late, 0)).toBe('timestamp_outside_tolerance')
      expect(await at(-1, late, 0)).toBe('timestamp_outside_tolerance')
    })

    it('says by how many whole seconds t is off', async () => {
      const d = await delivery(buildConversionEvent(), { timestamp: NOW - 301 })
      await expect(verifyEvent({ ...d, secret: SECRET, now: () => late })).rejects.toThrow(
        /made 301 s in the past; tolerance is 300 s/,
      )
    })
  })

  it('reads Service-Delivery-Attempt only when it is a plain number', async () => {
    const { createReceiver } = await import('../receiver/create-receiver.js')
    const attempts: (number | null)[] = []
    const receiver = createReceiver({
      secret: SECRET,
      now,
      onConversion: (_c, _e, ctx) => void attempts.push(ctx.attempt),
    })
    for (const [n, value] of ['3', '0x3', '1e0', ' 3 ', '0'].entries()) {
      const d = await delivery(buildConversionEvent({ conversion: { id: 500 + n } }))
      await receiver.receive({ ...d, headers: { ...d.headers, 'service-delivery-attempt': value } })
    }
    expect(attempts).toEqual([3, null, null, null, null])
  })

  it('passes occurredAt through as the network reported it', async () => {
    const event = buildConversionEvent({ conversion: { occurredAt: '2026-11-20 09:15' } })
    expect((await verify(await delivery(event))).data).toEqual(event.data)
  })

  it('accepts an unknown status and an unknown event type', async () => {
    const future = buildConversionEvent({ conversion: { status: 'clawed_back' } })
    expect((await verify(await delivery(future))).type).toBe('conversion.created')
    const other = {
      id: 'evt_f',
      type: 'payout.sent',
      createdAt: '2026-11-20T10:00:00Z',
      data: { x: 1 },
    }
    expect(await verify(await delivery(other))).toEqual(other)
  })

  it('says event_id_mismatch when Service-Event-Id differs from the signed id', async () => {
    const d = await delivery(buildConversionEvent())
    const headers = { ...d.headers, 'service-event-id': 'evt_someone_else' }
    expect(await codeOf(verify({ ...d, headers }))).toBe('event_id_mismatch')
  })

  it('says payload_too_large past maxBodyBytes, before any other check', async () => {
    const d = await delivery(buildConversionEvent())
    const code = await codeOf(verifyEvent({ ...d, headers: {}, secret: SECRET, maxBodyBytes: 10 }))
    expect(code).toBe('payload_too_large')
  })

  it('says raw_body_unavailable when given a parsed body instead of bytes', async () => {
    const d = await delivery(buildConversionEvent())
    const code = await codeOf(verify({ ...d, rawBody: JSON.parse(d.body) }))
    expect(code).toBe('raw_body_unavailable')
  })

  it('throws a TypeError naming the fix when the secret is missing', async () => {
    const d = await delivery(buildConversionEvent())
    await expect(verifyEvent({ ...d, secret: undefined as never })).rejects.toThrow(
      /AFFILIATE_WEBHOOK_SECRET/,
    )
    await expect(verifyEvent({ ...d, secret: [] })).rejects.toThrow(TypeError)
  })

  it('never puts the secret or the expected signature in an error message', async () => {
    const event = buildConversionEvent()
    const good = await delivery(event)
    const expected = (good.headers['service-signature'] as string).split('v1=')[1] as string
    const tampered = await delivery({ ...event, id: 'evt_tampered' })
    const headers = { ...tampered.headers, 'service-signature': `t=${NOW},v1=${'0'.repeat(64)}` }
    const error: unknown = await verify({ headers, rawBody: good.rawBody }).then(
      () => undefined,
      (caught: unknown) => caught,
    )
    expect(isWebhookError(error) && error.code).toBe('signature_mismatch')
    const text = `${(error as Error).message} ${(error as Error).stack} ${JSON.stringify(error)}`
    expect(text).not.toContain(SECRET)
    expect(text).not.toContain(expected)
  })
})

import { buildConversionEvent, signPayload } from '@affiliate-webhooks/core/testing'
import { describe, expect, it } from 'vitest'
import { diagnoseSignature } from './diagnose.js'

const SECRET = 'whsec_diagnose_test'
// After every createdAt the tests stamp (now, or fixed 2026 dates): an event is never signed before it was created.
const NOW = 2_000_000_000
const enc = (text: string) => new TextEncoder().encode(text)
const event = buildConversionEvent({
  id: 'evt_diagnose',
  createdAt: '2026-11-20T10:00:00.000Z',
  conversion: { id: 1001, status: 'approved', currency: 'EUR' },
})
// A field the spec does not list, with text outside ASCII.
const body = JSON.stringify({ ...event, data: { ...event.data, note: 'Café ✓' } })

const sortKeys = (value: unknown): unknown =>
  value === null || typeof value !== 'object'
    ? value
    : Object.fromEntries(
        Object.entries(value)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([k, v]) => [k, sortKeys(v)]),
      )

const header = (
  options: { secret?: string; payload?: string | Uint8Array; timestamp?: number } = {},
) =>
  signPayload({
    secret: options.secret ?? SECRET,
    payload: options.payload ?? body,
    timestamp: options.timestamp ?? NOW,
  })

const diagnose = async (
  overrides: {
    header?: string
    body?: Uint8Array | string
    secret?: string
    eventId?: string
  } = {},
) =>
  diagnoseSignature({
    header: overrides.header ?? (await header()),
    body: typeof overrides.body === 'string' ? enc(overrides.body) : (overrides.body ?? enc(body)),
    secret: overrides.secret ?? SECRET,
    now: NOW * 1000 + 1500,
    ...(overrides.eventId === undefined ? {} : { eventId: overrides.eventId }),
  })

describe('diagnoseSignature', () => {
  it('verifies an untouched delivery and names its event', async () => {
    const diagnosis = await diagnose()
    expect(diagnosis).toMatchObject({
      verified: true,
      code: 'verified',
      event: { id: 'evt_diagnose', type: 'conversion.created' },
      signedAt: NOW,
      // The clock's second against t, as verification counts it.
      ageSeconds: 1,
    })
  })

  it('says the secret is wrong when nothing else explains it', async () => {
    const diagnosis = await diagnose({ secret: 'whsec_another_endpoint' })
    expect(diagnosis).toMatchObject({ verified: false, code: 'wrong_secret' })
  })

  it('spots an API key given instead of the endpoint secret', async () => {
    const diagnosis = await diagnose({ secret: `la_${'x'.repeat(32)}` })
    expect(diagnosis.code).toBe('wrong_secret')
    expect(diagnosis.hints.join(' ')).toMatch(/API key/)
  })

  it('spots a secret used without its whsec_ prefix, both ways round', async () => {
    expect((await diagnose({ secret: 'diagnose_test' })).code).toBe('secret_without_prefix')
    const signedBare = await header({ secret: 'diagnose_test' })
    expect((await diagnose({ header: signedBare })).code).toBe('signed_without_prefix')
  })

  it('spots a secret with whitespace or quotes around it', async () => {
    expect((await diagnose({ secret: `"${SECRET}"\n` })).code).toBe('secret_whitespace')
  })

  it.each([
    ['a trailing newline', `${body}\n`, 'body_trailing_newline'],
    ['a trailing CRLF', `${body}\r\n`, 'body_trailing_newline'],
    [
      're-serialised JSON (pretty-printed)',
      JSON.stringify(JSON.parse(body), null, 2),
      'body_reserialized',
    ],
    [
      're-serialised JSON (keys sorted)',
      JSON.stringify(sortKeys(JSON.parse(body))),
      'body_reserialized',
    ],
    [
      'non-ASCII escaped as \\u',
      body.replace('é', '\\u00e9').replace('✓', '\\u2713'),
      'body_reserialized',
    ],
    ['leading whitespace', `  ${body}`, 'body_whitespace'],
  ])('spots %s', async (_name, changed, code) => {
    const diagnosis = await diagnose({ body: changed })
    expect(diagnosis.verified).toBe(false)
    expect(diagnosis.code).toBe(code)
    expect(diagnosis.hints.join(' ')).toMatch(/raw request bytes/)
  })

  it('spots a body that lost its final newline', async () => {
    const signed = await header({ payload: `${body}\n` })
    expect((await diagnose({ header: signed })).code).toBe('body_missing_newline')
  })

  it('spots CRLF line endings where LF was signed', async () => {
    const pretty = JSON.stringify(JSON.parse(body), null, 2)
    const signed = await header({ payload: pretty })
    const diagnosis = await diagnose({ header: signed, body: pretty.replace(/\n/g, '\r\n') })
    expect(diagnosis.code).toBe('body_crlf')
  })

  it('spots a byte order mark put in front of the body', async () => {
    const withBom = new Uint8Array([0xef, 0xbb, 0xbf, ...enc(body)])
    expect((await diagnose({ body: withBom })).code).toBe('body_bom')
  })

  it('spots a body re-encoded as Latin-1', async () => {
    const latin1 = Uint8Array.from(body.replace('✓', '?'), (c) => c.charCodeAt(0))
    const signed = await header({ payload: body.replace('✓', '?') })
    expect((await diagnose({ header: signed, body: latin1 })).code).toBe('body_encoding')
  })

  it('names every change when it takes two (no prefix and a trailing newline)', async () => {
    const diagnosis = await diagnose({ secret: 'diagnose_test', body: `${body}\n` })
    expect(diagnosis.causes).toEqual(['secret_without_prefix', 'body_trailing_newline'])
  })

  it('says by how much a matching signature is outside the tolerance, in the past or the future', async () => {
    const old = await diagnose({ header: await header({ timestamp: NOW - 600 }) })
    expect(old).toMatchObject({
      verified: false,
      code: 'timestamp_outside_tolerance',
      ageSeconds: 601,
    })
    expect(old.message).toMatch(/601 s ago, 301 s beyond the 300 s tolerance/)
    const ahead = await diagnose({ header: await header({ timestamp: NOW + 400 }) })
    expect(ahead.message).toMatch(/399 s in the future, 99 s beyond/)
  })

  it('draws the tolerance line where verification does: 300 s accepted, 301 s refused', async () => {
    const at = async (age: number) =>
      diagnoseSignature({
        header: await header({ timestamp: NOW - age }),
        body: enc(body),
        secret: SECRET,
        now: NOW * 1000 + 999,
      })
    expect(await at(300)).toMatchObject({ verified: true, ageSeconds: 300 })
    expect((await at(300)).hints.join(' ')).toMatch(/300 s ago, within the 300 s tolerance/)
    expect(await at(-300)).toMatchObject({ verified: true, ageSeconds: -300 })
    expect(await at(301)).toMatchObject({ code: 'timestamp_outside_tolerance' })
    expect((await at(301)).message).toMatch(/301 s ago, 1 s beyond the 300 s tolerance/)
    expect(await at(-301)).toMatchObject({ code: 'timestamp_outside_tolerance' })
  })

  it('verifies what verification accepts: a matching v1 beside parts it cannot use', async () => {
    const value = await header()
    const [t, v1] = value.split(',') as [string, string]
    for (const shape of [
      `${value},potato`,
      `${t},${'v1=potato,'.repeat(8)}${v1}`,
      `${t},${`v1=${'0'.repeat(64)},`.repeat(8)}${v1}`,
      `${value},x=${'a'.repeat(5000)}`,
      `${value}, ${value}`,
    ]) {
      expect((await diagnose({ header: shape })).code).toBe('verified')
    }
    expect((await diagnose({ header: `t=${NOW - 5},${value}` })).code).toBe('malformed_header')
  })

  it('reports a malformed or missing header', async () => {
    expect((await diagnose({ header: 't=123,v1=xyz' })).code).toBe('malformed_header')
    expect((await diagnose({ header: '  ' })).code).toBe('missing_header')
  })

  it('accepts a header pasted with its name or in quotes, and says so', async () => {
    const value = await header()
    const named = await diagnose({ header: `Service-Signature: ${value}` })
    expect(named.verified).toBe(true)
    expect(named.hints.join(' ')).toMatch(/with its name/)
    expect((await diagnose({ header: `"${value}"` })).verified).toBe(true)
  })

  it('says when the signature matches but the body is not an event', async () => {
    const signed = await header({ payload: '{"hello":"world"}' })
    const diagnosis = await diagnose({ header: signed, body: '{"hello":"world"}' })
    expect(diagnosis.code).toBe('invalid_event')
  })

  it('checks Service-Event-Id against the signed body when given', async () => {
    expect((await diagnose({ eventId: 'evt_other' })).code).toBe('event_id_mismatch')
    expect((await diagnose({ eventId: 'evt_diagnose' })).verified).toBe(true)
  })
})

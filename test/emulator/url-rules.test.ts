import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Harness, startEmulator } from '../support/emulator-harness.js'

/** Every form refused with 422 url_not_allowed: the emulator's README lists them. */
const REFUSED_FORMS = [
  // IPv6 carrying 127.0.0.1: IPv4-compatible, NAT64, 6to4, IPv4-translated, IPv4-mapped.
  'https://[::127.0.0.1]/',
  'https://[64:ff9b::7f00:1]/',
  'https://[2002:7f00:1::1]/',
  'https://[::ffff:0:7f00:1]/',
  'https://[::ffff:7f00:1]/',
  'https://[::ffff:127.0.0.1]/',
  // ... and other private IPv4 addresses.
  'https://[64:ff9b::a00:1]/',
  'https://[2002:c0a8:1::1]/',
  'https://[::ffff:0:a9fe:a9fe]/',
  'https://[::10.0.0.1]/',
  // IPv4 special-purpose ranges.
  'https://0.0.0.0/',
  'https://0.1.2.3/',
  'https://10.1.2.3/',
  'https://100.64.0.1/',
  'https://100.127.255.254/',
  'https://127.0.0.1/',
  'https://169.254.169.254/',
  'https://172.16.0.1/',
  'https://172.31.255.254/',
  'https://192.0.0.1/',
  'https://192.0.0.170/',
  'https://192.0.2.1/',
  'https://192.88.99.1/',
  'https://192.168.0.1/',
  'https://198.18.0.1/',
  'https://198.19.255.254/',
  'https://198.51.100.1/',
  'https://203.0.113.1/',
  'https://224.0.0.1/',
  'https://239.255.255.250/',
  'https://240.0.0.1/',
  'https://255.255.255.255/',
  // The same addresses written as WHATWG URL parsers read them.
  'https://2130706433/',
  'https://0x7f.1/',
  // IPv6 special-purpose ranges and everything outside 2000::/3.
  'https://[::1]/',
  'https://[::]/',
  'https://[fec0::1]/',
  'https://[fc00::1]/',
  'https://[fd12:3456::1]/',
  'https://[fe80::1]/',
  'https://[ff02::1]/',
  'https://[100::1]/',
  'https://[64:ff9b:1::1]/',
  'https://[5f00::1]/',
  'https://[1234::1]/',
  'https://[2001::1]/',
  'https://[2001:2::1]/',
  'https://[2001:10::1]/',
  'https://[2001:db8::1]/',
  'https://[3fff::1]/',
]

/** Forms above that carry a loopback address: the default loopback exception takes them. */
const CARRIES_LOOPBACK = new Set([
  'https://[::127.0.0.1]/',
  'https://[64:ff9b::7f00:1]/',
  'https://[2002:7f00:1::1]/',
  'https://[::ffff:0:7f00:1]/',
  'https://[::ffff:7f00:1]/',
  'https://[::ffff:127.0.0.1]/',
  'https://127.0.0.1/',
  'https://2130706433/',
  'https://0x7f.1/',
  'https://[::1]/',
])

const EVENTS = ['conversion.created']

let strict: Harness
let lenient: Harness

beforeAll(async () => {
  ;[strict, lenient] = await Promise.all([startEmulator({ strict: true }), startEmulator()])
})
afterAll(async () => {
  await Promise.all([strict?.close(), lenient?.close()])
})

/** POST /v1/webhooks, then DELETE what was created, so the limit of five never interferes. */
async function register(h: Harness, body: object) {
  const reply = await h.call('POST', '/v1/webhooks', { body })
  if (reply.status === 201) await h.call('DELETE', `/v1/webhooks/${reply.body.data.id}`)
  return reply
}

const fieldCodes = (reply: { body: { error: { field: string; code: string }[] } }) =>
  Object.fromEntries(reply.body.error.map((e) => [e.field, e.code]))

describe('webhook URL rules over HTTP', () => {
  it.each(REFUSED_FORMS)('--strict refuses %s with 422 url_not_allowed', async (url) => {
    const reply = await register(strict, { url, events: EVENTS })
    expect(reply.status).toBe(422)
    expect(reply.body.error.code).toBe('url_not_allowed')
  })

  it.each(REFUSED_FORMS.filter((url) => !CARRIES_LOOPBACK.has(url)))(
    'the default refuses %s too (it carries no loopback address)',
    async (url) => {
      const reply = await register(lenient, { url, events: EVENTS })
      expect(reply.status).toBe(422)
      expect(reply.body.error.code).toBe('url_not_allowed')
    },
  )

  it('the default loopback exception judges an IPv6 address by the IPv4 address it carries', async () => {
    for (const host of [
      '[::127.0.0.1]',
      '[64:ff9b::7f00:1]',
      '[2002:7f00:1::1]',
      '[::ffff:0:7f00:1]',
    ]) {
      const reply = await register(lenient, { url: `http://${host}:3000/hooks`, events: EVENTS })
      expect(reply.status, host).toBe(201)
    }
    for (const host of ['[::ffff:10.0.0.1]', '[64:ff9b::c0a8:1]', '[2002:a9fe:a9fe::1]']) {
      const reply = await register(lenient, { url: `http://${host}:3000/hooks`, events: EVENTS })
      expect(reply.status, host).toBe(400)
      expect(fieldCodes(reply), host).toEqual({ url: 'invalid_format' })
    }
  })

  it('the 800 characters are counted on the URL as stored: 787 written, 1,547 stored, refused', async () => {
    const url = `https://a.example.com/${'é'.repeat(152)}${'x'.repeat(613)}`
    expect(url.length).toBe(787)
    const reply = await register(strict, { url, events: EVENTS })
    expect(reply.status).toBe(400)
    expect(fieldCodes(reply)).toEqual({ url: 'invalid_format' })
    expect(reply.body.error[0].message).toContain('1547 as stored')
  })

  it('URL at the edge with astral characters: 800 stored accepted, 801 refused', async () => {
    // 😀 is stored as %F0%9F%98%80: 22 + 64 x 12 + 10 = 800.
    const edge = `https://a.example.com/${'😀'.repeat(64)}${'x'.repeat(10)}`
    const accepted = await register(strict, { url: edge, events: EVENTS })
    expect(accepted.status).toBe(201)
    expect(accepted.body.data.url).toHaveLength(800)
    const refused = await register(strict, { url: `${edge}x`, events: EVENTS })
    expect(fieldCodes(refused)).toEqual({ url: 'invalid_format' })
  })

  it('description: 255 astral characters accepted, 256 refused (code points, not UTF-16 units)', async () => {
    const url = 'https://hooks.example.com/a'
    const accepted = await register(strict, { url, events: EVENTS, description: '😀'.repeat(255) })
    expect(accepted.status).toBe(201)
    expect([...accepted.body.data.description]).toHaveLength(255)
    const refused = await register(strict, { url, events: EVENTS, description: '😀'.repeat(256) })
    expect(fieldCodes(refused)).toEqual({ description: 'invalid_format' })
  })

  it('application note: 501 astral characters refused, 500 accepted, counted the same way', async () => {
    const apply = (note: string) =>
      strict.call('POST', '/v1/programs/applications', {
        body: { programId: 41, channelId: 7, note },
      })
    const refused = await apply('😀'.repeat(501))
    expect(fieldCodes(refused)).toEqual({ note: 'invalid_format' })
    expect((await apply('😀'.repeat(500))).status).toBe(201)
  })
})

/**
 * The emulator's /v1 API over real HTTP: every route, every error code the spec
 * lists for it, the envelope, keys and scopes, rate limit and quota, bad input,
 * and the state file across a restart.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createClock } from '@affiliate-webhooks/emulator'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  answer,
  conversion,
  type Harness,
  type Receiver,
  type Reply,
  startEmulator,
  startReceiver,
} from '../support/emulator-harness.js'

const READ_KEY = `la_${'r'.repeat(32)}`
const WRITE_KEY = `la_${'w'.repeat(32)}`
const OTHER_KEY = `la_${'p'.repeat(32)}`
const MAIN_KEY = `la_${'m'.repeat(32)}`
// A minute boundary at the start, so the fixed rate-limit window never turns over mid-test.
const START = Date.UTC(2026, 0, 5, 10, 0, 0)

let receiver: Receiver
beforeAll(async () => {
  receiver = await startReceiver(answer(200, '{"received":true}'))
})
afterAll(() => receiver.close())

const harnesses: Harness[] = []
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.close()))
})
async function start(options: Parameters<typeof startEmulator>[0] = {}) {
  const harness = await startEmulator({
    apiKeys: [
      MAIN_KEY,
      `${READ_KEY}:webhooks:read`,
      `${WRITE_KEY}:webhooks:write`,
      `${OTHER_KEY}:programs:read`,
    ],
    clock: createClock({ start: START }),
    ...options,
  })
  harnesses.push(harness)
  return harness
}

/** POST /v1/webhooks of `url` for conversion.created. */
const registerUrl = (h: Harness, url: string) =>
  h.call('POST', '/v1/webhooks', { body: { url, events: ['conversion.created'] } })

function expectFailure(reply: Reply, status: number, code: string) {
  expect(reply.status).toBe(status)
  expect(reply.body.success).toBe(false)
  expect(typeof reply.body.message).toBe('string')
  expect(reply.body).not.toHaveProperty('data')
  expect(reply.body.error.code).toBe(code)
}

function expectInvalid(reply: Reply, fields: Record<string, 'required' | 'invalid_format'>) {
  expect(reply.status).toBe(400)
  expect(reply.body.success).toBe(false)
  expect(reply.body).not.toHaveProperty('data')
  expect(Array.isArray(reply.body.error)).toBe(true)
  expect(
    Object.fromEntries(
      reply.body.error.map((e: { field: string; code: string }) => [e.field, e.code]),
    ),
  ).toEqual(fields)
  for (const entry of reply.body.error) expect(typeof entry.message).toBe('string')
}

const rateHeaders = (reply: Reply) =>
  [
    'x-ratelimit-limit',
    'x-ratelimit-remaining',
    'x-ratelimit-reset',
    'x-quota-used',
    'x-quota-limit',
  ].filter((name) => reply.headers.has(name))

describe('emulator API: envelope, health, key check, routes', () => {
  it('GET /v1/health answers 200 without a key, with no rate-limit or quota headers', async () => {
    const h = await start()
    const reply = await h.call('GET', '/v1/health', { key: null })
    expect(reply.status).toBe(200)
    expect(reply.body.success).toBe(true)
    expect(reply.body).not.toHaveProperty('error')
    expect(rateHeaders(reply)).toEqual([])
  })

  it('GET /v1/me describes the calling key with callerIp and carries both header sets', async () => {
    const h = await start()
    const reply = await h.call('GET', '/v1/me', { key: READ_KEY })
    expect(reply.status).toBe(200)
    expect(reply.body.data).toMatchObject({
      last4: 'rrrr',
      scopes: ['webhooks:read'],
      callerIp: '127.0.0.1',
    })
    expect(rateHeaders(reply)).toHaveLength(5)
    expect(reply.headers.get('x-ratelimit-limit')).toBe('120')
    expect(reply.headers.get('x-quota-limit')).toBe('250000')
    // Any valid key may call it, whatever its scopes.
    expect((await h.call('GET', '/v1/me', { key: OTHER_KEY })).status).toBe(200)
  })

  it('generates a key with every scope unless one is given; limited keys come after it', async () => {
    const h = await start({ apiKeys: [`${READ_KEY}:webhooks:read`] })
    expect(h.emulator.generatedKey).toBe(true)
    expect(h.emulator.apiKeys.map((k) => k.key)).toEqual([h.key, READ_KEY])
    expect(h.key).toMatch(/^la_[A-Za-z0-9]{32}$/)
    expect((await h.call('POST', '/v1/webhooks', { body: {} })).status).toBe(400)
    expectFailure(
      await h.call('POST', '/v1/webhooks', { key: READ_KEY, body: {} }),
      403,
      'insufficient_scope',
    )
    const given = await start()
    expect(given.emulator.generatedKey).toBe(false)
    expect(given.key).toBe(MAIN_KEY)
  })

  it('answers 404 route_not_found for an unknown route, a path without /v1 and a wrong method', async () => {
    const h = await start()
    for (const [method, path] of [
      ['GET', '/v1/nothing'],
      ['GET', '/webhooks'],
      ['GET', '/health'],
      ['GET', '/'],
      ['PUT', '/v1/webhooks'],
      ['POST', '/v1/me'],
    ] as const) {
      expectFailure(await h.call(method, path), 404, 'route_not_found')
    }
  })

  it('answers 401 invalid_api_key for a missing, malformed, wrong-shaped or unknown key, with no limit headers and without counting', async () => {
    const h = await start()
    const before = await h.call('GET', '/v1/me')
    for (const authorization of [
      null,
      'Basic abc',
      `la_${'x'.repeat(31)}`,
      'la_short',
      `la_${'z'.repeat(32)}`,
    ]) {
      const reply =
        authorization === 'Basic abc'
          ? await fetch(`${h.base}/v1/webhooks`, { headers: { authorization } }).then(
              async (r) => ({
                status: r.status,
                headers: r.headers,
                body: await r.json(),
              }),
            )
          : await h.call('GET', '/v1/webhooks', { key: authorization })
      expectFailure(reply, 401, 'invalid_api_key')
      expect(rateHeaders(reply)).toEqual([])
    }
    const after = await h.call('GET', '/v1/me')
    expect(Number(after.headers.get('x-ratelimit-remaining'))).toBe(
      Number(before.headers.get('x-ratelimit-remaining')) - 1,
    )
    expect(Number(after.headers.get('x-quota-used'))).toBe(
      Number(before.headers.get('x-quota-used')) + 1,
    )
  })
})

describe('emulator API: webhooks', () => {
  it('registers an endpoint (201, secret once, duplicate events dropped), lists newest first, gets, changes and deletes it', async () => {
    const h = await start()
    const created = await h.call('POST', '/v1/webhooks', {
      body: {
        url: receiver.url,
        events: ['conversion.created', 'conversion.created'],
        description: 'shop',
      },
    })
    expect(created.status).toBe(201)
    expect(created.body.success).toBe(true)
    const endpoint = created.body.data
    expect(endpoint).toMatchObject({
      url: receiver.url,
      events: ['conversion.created'],
      description: 'shop',
      status: 'active',
      consecutiveFailures: 0,
      disabledAt: null,
      lastDeliveryAt: null,
    })
    expect(endpoint.secret).toMatch(/^whsec_/)
    const second = await h.register(receiver.url, ['conversion.updated'])

    const list = await h.call('GET', '/v1/webhooks')
    expect(list.status).toBe(200)
    expect(list.body.data.map((e: { id: string }) => e.id)).toEqual([second.id, endpoint.id])
    for (const item of list.body.data) expect(item).not.toHaveProperty('secret')

    const one = await h.call('GET', `/v1/webhooks/${endpoint.id}`)
    expect(one.body.data).toMatchObject({ id: endpoint.id, url: receiver.url })
    expect(one.body.data).not.toHaveProperty('secret')

    const patched = await h.call('PATCH', `/v1/webhooks/${endpoint.id}`, {
      body: { events: ['conversion.updated'], description: null, status: 'disabled' },
    })
    expect(patched.status).toBe(200)
    expect(patched.body.data).toMatchObject({
      events: ['conversion.updated'],
      description: null,
      status: 'disabled',
    })
    expect(patched.body.data.disabledAt).toEqual(expect.any(String))
    expect(patched.body.data).not.toHaveProperty('secret')
    expect(await h.patch(endpoint.id, { status: 'active' })).toMatchObject({
      status: 'active',
      consecutiveFailures: 0,
      disabledAt: null,
    })

    expect((await h.call('DELETE', `/v1/webhooks/${endpoint.id}`)).status).toBe(200)
    expectFailure(await h.call('GET', `/v1/webhooks/${endpoint.id}`), 404, 'webhook_not_found')
    expect((await h.call('GET', '/v1/webhooks')).body.data).toHaveLength(1)
  })

  it('answers 404 webhook_not_found on every route of an unknown id', async () => {
    const h = await start()
    for (const [method, path] of [
      ['GET', '/v1/webhooks/wh_nope'],
      ['PATCH', '/v1/webhooks/wh_nope'],
      ['DELETE', '/v1/webhooks/wh_nope'],
      ['POST', '/v1/webhooks/wh_nope/rotate-secret'],
      ['POST', '/v1/webhooks/wh_nope/test'],
      ['GET', '/v1/webhooks/wh_nope/deliveries'],
      ['POST', '/v1/webhooks/wh_nope/deliveries/dlv_nope/replay'],
      ['GET', '/v1/webhooks/%E0%A4%A'],
    ] as const) {
      expectFailure(
        await h.call(method, path, method === 'PATCH' ? { body: {} } : {}),
        404,
        'webhook_not_found',
      )
    }
  })

  it('refuses a sixth endpoint with 409 webhook_limit_reached; a deleted one no longer counts', async () => {
    const h = await start()
    const ids: string[] = []
    for (let i = 0; i < 5; i++) ids.push((await h.register(receiver.url)).id)
    const sixth = await registerUrl(h, receiver.url)
    expectFailure(sixth, 409, 'webhook_limit_reached')
    await h.call('DELETE', `/v1/webhooks/${ids[0]}`)
    expect((await registerUrl(h, receiver.url)).status).toBe(201)
  })

  it('validates fields: one entry per field, required or invalid_format', async () => {
    const h = await start()
    const post = (body: unknown) => h.call('POST', '/v1/webhooks', { body })
    expectInvalid(await post({}), { url: 'required', events: 'required' })
    expectInvalid(await post({ url: receiver.url, events: [] }), { events: 'required' })
    expectInvalid(await post({ url: receiver.url, events: ['conversion.deleted'] }), {
      events: 'invalid_format',
    })
    expectInvalid(await post({ url: receiver.url, events: ['webhook.test'] }), {
      events: 'invalid_format',
    })
    expectInvalid(await post({ url: receiver.url, events: 'conversion.created' }), {
      events: 'invalid_format',
    })
    expectInvalid(await post({ url: 'http://example.com/hooks', events: ['conversion.created'] }), {
      url: 'invalid_format',
    })
    expectInvalid(await post({ url: 'not a url', events: ['conversion.created'] }), {
      url: 'invalid_format',
    })
    expectInvalid(
      await post({ url: `https://example.com/${'a'.repeat(800)}`, events: ['conversion.created'] }),
      {
        url: 'invalid_format',
      },
    )
    expectInvalid(
      await post({ url: 42, events: ['conversion.created'], description: 'x'.repeat(256) }),
      {
        url: 'invalid_format',
        description: 'invalid_format',
      },
    )
    expectInvalid(await post([1, 2]), { body: 'invalid_format' })
    const endpoint = await h.register(receiver.url)
    expectInvalid(
      await h.call('PATCH', `/v1/webhooks/${endpoint.id}`, {
        body: { status: 'paused', events: [] },
      }),
      {
        status: 'invalid_format',
        events: 'required',
      },
    )
    // 255 characters is still fine.
    expect(
      (
        await h.call('PATCH', `/v1/webhooks/${endpoint.id}`, {
          body: { description: 'x'.repeat(255) },
        })
      ).status,
    ).toBe(200)
  })

  it('refuses with 422 url_not_allowed another port, credentials, a private address', async () => {
    const h = await start()
    for (const url of [
      'https://example.com:8443/hooks',
      'https://user:pass@example.com/hooks',
      'https://10.0.0.1/hooks',
      'https://192.168.1.20/hooks',
      'https://[fd00::1]/hooks',
      'https://intranet/hooks',
      'http://user:pass@127.0.0.1:3000/hooks',
    ]) {
      expectFailure(await registerUrl(h, url), 422, 'url_not_allowed')
    }
    expect((await registerUrl(h, 'https://example.com/hooks')).status).toBe(201)
  })

  it('allows http and any port on loopback by default; --strict applies the real rules', async () => {
    const relaxed = await start()
    for (const url of [
      'http://localhost:3000/hooks',
      'http://127.0.0.1:8080/x',
      'http://[::1]:9000/y',
    ]) {
      expect((await registerUrl(relaxed, url)).status).toBe(201)
    }
    const strict = await start({ strict: true })
    expectInvalid(await registerUrl(strict, 'http://localhost:3000/hooks'), {
      url: 'invalid_format',
    })
    expectFailure(await registerUrl(strict, 'https://localhost/hooks'), 422, 'url_not_allowed')
  })

  it('rotate-secret returns a new secret once; GET never shows it', async () => {
    const h = await start()
    const endpoint = await h.register(receiver.url)
    const rotated = await h.call('POST', `/v1/webhooks/${endpoint.id}/rotate-secret`)
    expect(rotated.status).toBe(200)
    expect(rotated.body.data.secret).toMatch(/^whsec_/)
    expect(rotated.body.data.secret).not.toBe(endpoint.secret)
    expect((await h.call('GET', `/v1/webhooks/${endpoint.id}`)).body.data).not.toHaveProperty(
      'secret',
    )
    expect(
      JSON.stringify((await h.call('GET', `/v1/webhooks/${endpoint.id}/deliveries`)).body),
    ).not.toContain('whsec_')
  })

  it('test answers 202 with eventId and deliveryId, and the delivery is in the history', async () => {
    const h = await start()
    const endpoint = await h.register(receiver.url, ['conversion.updated'])
    const reply = await h.call('POST', `/v1/webhooks/${endpoint.id}/test`)
    expect(reply.status).toBe(202)
    expect(reply.body.data.eventId).toMatch(/^evt_/)
    expect(reply.body.data.deliveryId).toMatch(/^dlv_/)
    await h.advance(0)
    const [delivery] = (await h.call('GET', `/v1/webhooks/${endpoint.id}/deliveries`)).body.data
    expect(delivery).toMatchObject({
      id: reply.body.data.deliveryId,
      eventId: reply.body.data.eventId,
      eventType: 'webhook.test',
      status: 'succeeded',
      responseStatus: 200,
      responseBody: '{"received":true}',
      attempts: 1,
      errorMessage: null,
      nextAttemptAt: null,
    })
    expect(delivery.durationMs).toEqual(expect.any(Number))
    expect(delivery.createdAt).toEqual(expect.any(String))
  })

  it('lists deliveries newest first, pages them, filters by status, and validates page, size and status', async () => {
    const h = await start()
    const endpoint = await h.register(receiver.url)
    const ids: string[] = []
    for (let i = 0; i < 12; i++)
      ids.push((await h.call('POST', `/v1/webhooks/${endpoint.id}/test`)).body.data.deliveryId)
    await h.advance(0)
    const path = `/v1/webhooks/${endpoint.id}/deliveries`
    const first = await h.call('GET', path)
    expect(first.body.data.map((d: { id: string }) => d.id)).toEqual(
      ids.slice().reverse().slice(0, 10),
    )
    expect(first.body.pagination).toEqual({ page: 1, size: 10, total: 12, lastPage: 2 })
    const second = await h.call('GET', `${path}?page=2&size=10`)
    expect(second.body.data.map((d: { id: string }) => d.id)).toEqual(ids.slice(0, 2).reverse())
    expect((await h.call('GET', `${path}?size=100`)).body.data).toHaveLength(12)
    expect((await h.call('GET', `${path}?status=succeeded&size=1`)).body.pagination.total).toBe(12)
    expect((await h.call('GET', `${path}?status=failed`)).body.data).toEqual([])
    expectInvalid(await h.call('GET', `${path}?size=0`), { size: 'invalid_format' })
    expectInvalid(await h.call('GET', `${path}?size=101`), { size: 'invalid_format' })
    expectInvalid(await h.call('GET', `${path}?page=0&size=abc&status=done`), {
      page: 'invalid_format',
      size: 'invalid_format',
      status: 'invalid_format',
    })
  })

  it('replay: 202 for a succeeded delivery, 409 delivery_not_replayable while retrying, 404 delivery_not_found', async () => {
    const failing = await startReceiver(answer(503))
    try {
      const h = await start()
      const ok = await h.register(receiver.url)
      const bad = await h.register(failing.url)
      const good = (await h.call('POST', `/v1/webhooks/${ok.id}/test`)).body.data
      const retrying = (await h.call('POST', `/v1/webhooks/${bad.id}/test`)).body.data
      await h.advance(0)
      const replay = await h.call(
        'POST',
        `/v1/webhooks/${ok.id}/deliveries/${good.deliveryId}/replay`,
      )
      expect(replay.status).toBe(202)
      expect(replay.body.data).toMatchObject({
        deliveryId: good.deliveryId,
        eventId: good.eventId,
        status: 'pending',
      })
      expectFailure(
        await h.call('POST', `/v1/webhooks/${bad.id}/deliveries/${retrying.deliveryId}/replay`),
        409,
        'delivery_not_replayable',
      )
      expectFailure(
        await h.call('POST', `/v1/webhooks/${ok.id}/deliveries/dlv_nope/replay`),
        404,
        'delivery_not_found',
      )
      // Another endpoint's delivery is not on this one.
      expectFailure(
        await h.call('POST', `/v1/webhooks/${ok.id}/deliveries/${retrying.deliveryId}/replay`),
        404,
        'delivery_not_found',
      )
    } finally {
      await failing.close()
    }
  })
})

describe('emulator API: scopes', () => {
  it('403 insufficient_scope with required and granted; write implies read', async () => {
    const h = await start()
    const endpoint = await h.register(receiver.url)
    expect((await h.call('GET', '/v1/webhooks', { key: READ_KEY })).status).toBe(200)
    expect(
      (await h.call('GET', `/v1/webhooks/${endpoint.id}/deliveries`, { key: READ_KEY })).status,
    ).toBe(200)
    const refused = await h.call('POST', `/v1/webhooks/${endpoint.id}/rotate-secret`, {
      key: READ_KEY,
    })
    expectFailure(refused, 403, 'insufficient_scope')
    expect(refused.body.error).toMatchObject({
      required: 'webhooks:write',
      granted: ['webhooks:read'],
    })
    expect(rateHeaders(refused)).toHaveLength(5)
    for (const [method, path] of [
      ['POST', '/v1/webhooks'],
      ['PATCH', `/v1/webhooks/${endpoint.id}`],
      ['DELETE', `/v1/webhooks/${endpoint.id}`],
      ['POST', `/v1/webhooks/${endpoint.id}/test`],
      ['POST', `/v1/webhooks/${endpoint.id}/deliveries/dlv_x/replay`],
    ] as const) {
      expectFailure(
        await h.call(method, path, { key: READ_KEY, body: {} }),
        403,
        'insufficient_scope',
      )
    }
    // webhooks:write also reads.
    expect((await h.call('GET', `/v1/webhooks/${endpoint.id}`, { key: WRITE_KEY })).status).toBe(
      200,
    )
    expect(
      (await h.call('POST', `/v1/webhooks/${endpoint.id}/test`, { key: WRITE_KEY })).status,
    ).toBe(202)
    const other = await h.call('GET', '/v1/webhooks', { key: OTHER_KEY })
    expectFailure(other, 403, 'insufficient_scope')
    expect(other.body.error).toMatchObject({
      required: 'webhooks:read',
      granted: ['programs:read'],
    })
  })
})

describe('emulator API: rate limit and quota', () => {
  it('120 requests per fixed minute, then 429 rate_limited with Retry-After and no quota headers; 401 and health are not limited; the next minute opens', async () => {
    const h = await start()
    for (let i = 0; i < 120; i++) {
      const reply = await h.call('GET', '/v1/webhooks', { key: i % 2 ? READ_KEY : MAIN_KEY })
      expect(reply.status).toBe(200)
      expect(reply.headers.get('x-ratelimit-remaining')).toBe(String(119 - i))
      expect(reply.headers.get('x-quota-used')).toBe(String(i))
    }
    const limited = await h.call('GET', '/v1/webhooks')
    expectFailure(limited, 429, 'rate_limited')
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(60)
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0')
    expect(limited.headers.has('x-quota-used')).toBe(false)
    // The window's own end on the emulator's clock: a multiple of 60, the same all window long.
    expect(limited.headers.get('x-ratelimit-reset')).toBe(String(START / 1000 + 60))
    // Every key of the account shares the window; /v1/me is limited too.
    expectFailure(await h.call('GET', '/v1/me', { key: READ_KEY }), 429, 'rate_limited')
    expectFailure(await h.call('GET', '/v1/webhooks', { key: null }), 401, 'invalid_api_key')
    expect((await h.call('GET', '/v1/health', { key: null })).status).toBe(200)
    await h.advance(60_000)
    const next = await h.call('GET', '/v1/webhooks')
    expect(next.status).toBe(200)
    expect(next.headers.get('x-ratelimit-remaining')).toBe('119')
    // The 429s did not count toward the quota.
    expect(next.headers.get('x-quota-used')).toBe('120')
  })

  it('the minute follows --time-scale: Retry-After and the window shrink with it', async () => {
    const h = await start({ clock: createClock({ start: START, timeScale: 600 }), rateLimit: 3 })
    let limited: Reply | undefined
    for (let i = 0; i < 50 && !limited; i++) {
      const reply = await h.call('GET', '/v1/webhooks')
      if (reply.status === 429) limited = reply
    }
    expect(limited).toBeDefined()
    expect(limited?.headers.get('retry-after')).toBe('1')
    // 60 s of service time is 100 ms here.
    await new Promise((resolve) => setTimeout(resolve, 150))
    expect((await h.call('GET', '/v1/webhooks')).status).toBe(200)
  })

  it('after the monthly quota: 429 quota_exceeded, except GET /v1/me', async () => {
    const h = await start({ monthlyQuota: 3 })
    for (let i = 0; i < 3; i++) expect((await h.call('GET', '/v1/webhooks')).status).toBe(200)
    const refused = await h.call('GET', '/v1/webhooks')
    expectFailure(refused, 429, 'quota_exceeded')
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(refused.headers.has('x-quota-used')).toBe(false)
    const me = await h.call('GET', '/v1/me')
    expect(me.status).toBe(200)
    expect(me.headers.get('x-quota-used')).toBe('3')
  })
})

describe('emulator API: bad input', () => {
  it('400 malformed_json for a body that is not JSON, on every route that takes a body', async () => {
    const h = await start()
    const endpoint = await h.register(receiver.url)
    for (const [method, path] of [
      ['POST', '/v1/webhooks'],
      ['PATCH', `/v1/webhooks/${endpoint.id}`],
      ['POST', '/emulator/conversions'],
      ['POST', '/emulator/clock'],
    ] as const) {
      expectFailure(await h.call(method, path, { raw: '{"url": ' }), 400, 'malformed_json')
    }
  })

  it('413 payload_too_large for a body over 1 MB, and the connection still answers', async () => {
    const h = await start()
    const huge = `{"url":"${'a'.repeat(1_100_000)}"}`
    expectFailure(await h.call('POST', '/v1/webhooks', { raw: huge }), 413, 'payload_too_large')
    expectFailure(
      await h.call('POST', '/v1/webhooks', { raw: huge, key: null }),
      413,
      'payload_too_large',
    )
    expect((await h.call('GET', '/v1/health')).status).toBe(200)
  })

  it('control routes: need a key, validate their bodies, and are not rate limited', async () => {
    const h = await start({ rateLimit: 1 })
    expectFailure(
      await h.call('POST', '/emulator/clock', { key: null, body: { advanceMs: 1 } }),
      401,
      'invalid_api_key',
    )
    expectInvalid(await h.call('POST', '/emulator/clock', { body: {} }), { advanceMs: 'required' })
    expectInvalid(await h.call('POST', '/emulator/clock', { body: { advanceMs: -5 } }), {
      advanceMs: 'invalid_format',
    })
    expectInvalid(
      await h.call('POST', '/emulator/conversions', { body: { status: 'won', programId: 'x' } }),
      {
        id: 'required',
        status: 'invalid_format',
        programId: 'invalid_format',
      },
    )
    const log = await h.call('GET', '/emulator/log')
    expect(log.status).toBe(200)
    expect(log.headers.has('x-ratelimit-limit')).toBe(false)
  })
})

describe('emulator API: conversions', () => {
  it('emits created for a new id, updated for a new status, nothing for the same status, to active subscribed endpoints only', async () => {
    const h = await start()
    const both = await h.register(receiver.url)
    const createdOnly = await h.register(receiver.url, ['conversion.created'])
    const disabled = await h.register(receiver.url)
    await h.call('PATCH', `/v1/webhooks/${disabled.id}`, { body: { status: 'disabled' } })
    const emit = (body: unknown) => h.call('POST', '/emulator/conversions', { body })

    const created = await emit(conversion(5))
    expect(created.status).toBe(200)
    expect(created.body.data.event).toMatchObject({
      type: 'conversion.created',
      id: expect.stringMatching(/^evt_/),
    })
    expect(
      created.body.data.deliveries.map((d: { webhookId: string }) => d.webhookId).sort(),
    ).toEqual([both.id, createdOnly.id].sort())
    const same = await emit(conversion(5))
    expect(same.body.data).toEqual({ event: null, deliveries: [] })
    const updated = await emit(conversion(5, 'approved'))
    expect(updated.body.data.event.type).toBe('conversion.updated')
    expect(updated.body.data.deliveries).toEqual([{ id: expect.any(String), webhookId: both.id }])
    await h.advance(0)
    const log = (await h.call('GET', '/emulator/log')).body.data
    expect(log).toHaveLength(3)
    expect(log[0]).toMatchObject({
      webhookId: expect.any(String),
      deliveryId: expect.stringMatching(/^dlv_/),
      eventId: created.body.data.event.id,
      attempt: 1,
      ok: true,
      responseStatus: 200,
      durationMs: expect.any(Number),
    })
  })

  it("GET /emulator/log?deliveryId= keeps one delivery's attempts, each with the status it left and when the next is due", async () => {
    const h = await start()
    const failing = await startReceiver(answer(500, '{"error":{"code":"boom"}}'))
    try {
      const good = await h.register(receiver.url)
      const bad = await h.register(failing.url)
      const emitted = (await h.call('POST', '/emulator/conversions', { body: conversion(7) })).body
        .data.deliveries as { id: string; webhookId: string }[]
      await h.advance(0)
      const ofEndpoint = (id: string) => emitted.find((d) => d.webhookId === id)?.id as string
      const log = async (deliveryId: string) =>
        (await h.call('GET', `/emulator/log?deliveryId=${deliveryId}`)).body.data
      expect(await log(ofEndpoint(good.id))).toEqual([
        expect.objectContaining({
          deliveryId: ofEndpoint(good.id),
          attempt: 1,
          status: 'succeeded',
          nextAttemptAt: null,
          outcome: null,
        }),
      ])
      expect(await log(ofEndpoint(bad.id))).toEqual([
        expect.objectContaining({
          deliveryId: ofEndpoint(bad.id),
          attempt: 1,
          status: 'retrying',
          errorCode: 'boom',
          nextAttemptAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\S+Z$/),
        }),
      ])
      expect(await log('dlv_none')).toEqual([])
      expect((await h.call('GET', '/emulator/log')).body.data).toHaveLength(2)
    } finally {
      await failing.close()
    }
  })
})

describe('emulator state file', () => {
  let dir: string
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'aw-emulator-'))
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('a restart loses nothing: endpoints, deliveries, conversions, the log and the generated key', async () => {
    const statePath = join(dir, 'state.json')
    const first = await startEmulator({ statePath })
    const endpoint = await first.register(receiver.url)
    await first.call('POST', '/emulator/conversions', { body: conversion(9) })
    await first.advance(0)
    await first.close()
    expect(existsSync(statePath)).toBe(true)
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([])

    const second = await startEmulator({ statePath })
    harnesses.push(second)
    expect(second.key).toBe(first.key)
    const got = await second.call('GET', `/v1/webhooks/${endpoint.id}`)
    expect(got.body.data).toMatchObject({ id: endpoint.id, url: receiver.url })
    expect(got.body.data.lastDeliveryAt).toEqual(expect.any(String))
    const deliveries = (await second.call('GET', `/v1/webhooks/${endpoint.id}/deliveries`)).body
      .data
    expect(deliveries).toHaveLength(1)
    expect(deliveries[0].status).toBe('succeeded')
    expect((await second.call('GET', '/emulator/log')).body.data).toHaveLength(1)
    // The conversion is known: the same status emits nothing.
    expect(
      (await second.call('POST', '/emulator/conversions', { body: conversion(9) })).body.data.event,
    ).toBeNull()
  })

  it('a file that is not a state file stops the start with a clear error', async () => {
    const statePath = join(dir, 'broken.json')
    writeFileSync(statePath, 'not json')
    await expect(startEmulator({ statePath })).rejects.toThrow(/not JSON/)
  })
})

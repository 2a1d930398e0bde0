/**
 * The emulator's keys and account over real HTTP: several keys sharing one
 * rate limit and quota, at most 10 active, scopes, an IP allowlist with IPv4,
 * IPv6 and CIDR entries, expiry on the emulator's clock, pause and resume, roll
 * with rotatedAt, revoke, an inactive account; and the limit headers on every
 * request that passes the key (413 and unknown routes included).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createClock, createEmulator, type Emulator } from '@affiliate-webhooks/emulator'
import { afterEach, describe, expect, it } from 'vitest'
import { type Harness, type Reply, startEmulator } from '../support/emulator-harness.js'

const MAIN_KEY = `la_${'m'.repeat(32)}`
const START = Date.UTC(2026, 0, 5, 10, 0, 0)
const DAY = 86_400_000

const harnesses: Harness[] = []
const emulators: Emulator[] = []
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.close()))
  await Promise.all(emulators.splice(0).map((e) => e.close()))
})
async function start(options: Parameters<typeof startEmulator>[0] = {}) {
  const harness = await startEmulator({
    apiKeys: [MAIN_KEY],
    clock: createClock({ start: START }),
    ...options,
  })
  harnesses.push(harness)
  return harness
}

function expectFailure(reply: Reply, status: number, code: string) {
  expect(reply.status, JSON.stringify(reply.body)).toBe(status)
  expect(reply.body.success).toBe(false)
  expect(reply.body.error.code).toBe(code)
}
const ok = (reply: Reply, status = 200) => {
  expect(reply.status, JSON.stringify(reply.body)).toBe(status)
  return reply.body.data
}
const LIMIT_HEADERS = [
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'x-quota-used',
  'x-quota-limit',
]
const limitHeaders = (reply: Reply) => LIMIT_HEADERS.filter((name) => reply.headers.has(name))

/** POST /emulator/keys; resolves to `{ id, key, ... }`. */
async function newKey(h: Harness, body: Record<string, unknown>) {
  return ok(await h.call('POST', '/emulator/keys', { body }), 201)
}

describe('emulator keys: several per account', () => {
  it('POST /emulator/keys: 201 { id, key }; write implies read; /v1/me shows the key', async () => {
    const h = await start()
    const created = await newKey(h, {
      scopes: ['programs:write', 'webhooks:read'],
      ipAllowlist: '127.0.0.1, 10.0.0.0/8',
      expiresInDays: 90,
    })
    expect(created.id).toMatch(/^key_/)
    expect(created.key).toMatch(/^la_[A-Za-z0-9]{32}$/)
    expect(created.key).not.toBe(MAIN_KEY)
    const me = ok(await h.call('GET', '/v1/me', { key: created.key }))
    expect(me).toMatchObject({
      last4: created.key.slice(-4),
      scopes: ['programs:write', 'webhooks:read'],
      ipAllowlist: ['127.0.0.1', '10.0.0.0/8'],
      callerIp: '127.0.0.1',
    })
    expect(Date.parse(me.expiresAt) - START).toBeGreaterThanOrEqual(90 * DAY)
    expect(Date.parse(me.expiresAt) - START).toBeLessThan(90 * DAY + 60_000)
    // programs:write grants programs:read; webhooks:read does not grant webhooks:write.
    expect((await h.call('GET', '/v1/programs', { key: created.key })).status).toBe(200)
    const refused = await h.call('POST', '/v1/webhooks', { key: created.key, body: {} })
    expectFailure(refused, 403, 'insufficient_scope')
    expect(refused.body.error).toMatchObject({
      required: 'webhooks:write',
      granted: ['programs:write', 'webhooks:read'],
    })
  })

  it('validates the body: scopes, allowlist entries (at most 20), expiry of 30, 90 or 365 days', async () => {
    const h = await start()
    const invalid = async (body: unknown) => {
      const reply = await h.call('POST', '/emulator/keys', { body })
      expect(reply.status).toBe(400)
      return Object.fromEntries(
        reply.body.error.map((e: { field: string; code: string }) => [e.field, e.code]),
      )
    }
    expect(await invalid({})).toEqual({ scopes: 'required' })
    expect(await invalid({ scopes: ['programs:admin'], expiresInDays: 60 })).toEqual({
      scopes: 'invalid_format',
      expiresInDays: 'invalid_format',
    })
    expect(await invalid({ scopes: ['links:read'], ipAllowlist: ['10.0.0.0/33'] })).toEqual({
      ipAllowlist: 'invalid_format',
    })
    expect(await invalid({ scopes: ['links:read'], ipAllowlist: 'example.com' })).toEqual({
      ipAllowlist: 'invalid_format',
    })
    const many = Array.from({ length: 21 }, (_, i) => `10.0.0.${i}`)
    expect(await invalid({ scopes: ['links:read'], ipAllowlist: many })).toEqual({
      ipAllowlist: 'invalid_format',
    })
    await newKey(h, { scopes: ['links:read'], ipAllowlist: many.slice(0, 20) })
    for (const days of [30, 90, 365])
      await newKey(h, { scopes: ['links:read'], expiresInDays: days })
  })

  it('at most 10 active keys: the 11th is 409 key_limit_reached; revoked and expired keys do not count', async () => {
    const h = await start()
    const made = []
    for (let i = 0; i < 8; i++) made.push(await newKey(h, { scopes: ['programs:read'] }))
    const expiring = await newKey(h, { scopes: ['programs:read'], expiresInDays: 30 })
    expect(expiring.id).toMatch(/^key_/)
    // MAIN_KEY + 9 = 10 active.
    expectFailure(
      await h.call('POST', '/emulator/keys', { body: { scopes: ['programs:read'] } }),
      409,
      'key_limit_reached',
    )
    ok(await h.call('POST', `/emulator/keys/${made[0].id}/revoke`))
    await newKey(h, { scopes: ['programs:read'] })
    // A paused key still counts.
    ok(await h.call('POST', `/emulator/keys/${made[1].id}/pause`))
    expectFailure(
      await h.call('POST', '/emulator/keys', { body: { scopes: ['programs:read'] } }),
      409,
      'key_limit_reached',
    )
    await h.advance(30 * DAY)
    await newKey(h, { scopes: ['programs:read'] })
  })

  it('every key of the account shares one rate limit and one quota', async () => {
    const h = await start({ rateLimit: 4, monthlyQuota: 1000 })
    const second = (await newKey(h, { scopes: ['webhooks:read'] })).key
    const replies: Reply[] = []
    for (const key of [MAIN_KEY, second, MAIN_KEY, second]) {
      replies.push(await h.call('GET', '/v1/webhooks', { key }))
    }
    expect(replies.map((r) => r.headers.get('x-ratelimit-remaining'))).toEqual(['3', '2', '1', '0'])
    expect(replies.map((r) => r.headers.get('x-quota-used'))).toEqual(['0', '1', '2', '3'])
    expectFailure(await h.call('GET', '/v1/webhooks', { key: second }), 429, 'rate_limited')
    expectFailure(await h.call('GET', '/v1/webhooks', { key: MAIN_KEY }), 429, 'rate_limited')
    await h.advance(60_000)
    const next = await h.call('GET', '/v1/webhooks', { key: second })
    expect(next.headers.get('x-ratelimit-remaining')).toBe('3')
    expect(next.headers.get('x-quota-used')).toBe('4')
  })
})

describe('emulator keys: lifecycle', () => {
  it('pause: 401 while paused, scopes kept; resume restores it', async () => {
    const h = await start()
    const { id, key } = await newKey(h, { scopes: ['programs:read'] })
    const paused = ok(await h.call('POST', `/emulator/keys/${id}/pause`))
    expect(paused).toMatchObject({ id, status: 'paused', scopes: ['programs:read'] })
    expect(paused).not.toHaveProperty('key')
    const refused = await h.call('GET', '/v1/programs', { key })
    expectFailure(refused, 401, 'invalid_api_key')
    expect(limitHeaders(refused)).toEqual([])
    expectFailure(await h.call('GET', '/v1/me', { key }), 401, 'invalid_api_key')
    ok(await h.call('POST', `/emulator/keys/${id}/resume`))
    expect(ok(await h.call('GET', '/v1/me', { key }))).toMatchObject({
      id,
      scopes: ['programs:read'],
    })
    // Keys given at the start have ids too: /v1/me and GET /emulator/keys show them, never a secret.
    const main = ok(await h.call('GET', '/v1/me'))
    const listed = ok(await h.call('GET', '/emulator/keys'))
    expect(listed.map((k: { id: string }) => k.id)).toEqual([main.id, id])
    expect(JSON.stringify(listed)).not.toContain(key)
    expect(JSON.stringify(listed)).not.toContain(MAIN_KEY)
    expectFailure(await h.call('POST', '/emulator/keys/key_nope/pause'), 404, 'key_not_found')
  })

  it('roll: a new secret; the old one gets 401 with rotatedAt and a message naming the date', async () => {
    const h = await start()
    const { id, key: old } = await newKey(h, {
      scopes: ['programs:read'],
      ipAllowlist: ['127.0.0.1'],
    })
    const rolled = ok(await h.call('POST', `/emulator/keys/${id}/roll`))
    expect(rolled.key).toMatch(/^la_[A-Za-z0-9]{32}$/)
    expect(rolled.key).not.toBe(old)
    const refused = await h.call('GET', '/v1/programs', { key: old })
    expectFailure(refused, 401, 'invalid_api_key')
    const rotatedAt = refused.body.error.rotatedAt
    expect(Date.parse(rotatedAt) - START).toBeGreaterThanOrEqual(0)
    expect(Date.parse(rotatedAt) - START).toBeLessThan(60_000)
    expect(refused.body.message).toContain(rotatedAt.slice(0, 10))
    expect(limitHeaders(refused)).toEqual([])
    // Permissions carry over.
    expect(ok(await h.call('GET', '/v1/me', { key: rolled.key }))).toMatchObject({
      scopes: ['programs:read'],
      ipAllowlist: ['127.0.0.1'],
    })
    // A second roll: both old secrets are refused, each with its own date.
    await h.advance(DAY)
    const again = ok(await h.call('POST', `/emulator/keys/${id}/roll`))
    const second = await h.call('GET', '/v1/me', { key: rolled.key })
    expect(Date.parse(second.body.error.rotatedAt) - Date.parse(rotatedAt)).toBeGreaterThanOrEqual(
      DAY,
    )
    expect((await h.call('GET', '/v1/me', { key: again.key })).status).toBe(200)
  })

  it('revoke: permanent; resume and roll are refused 409 key_revoked', async () => {
    const h = await start()
    const { id, key } = await newKey(h, { scopes: ['programs:read'] })
    expect(ok(await h.call('POST', `/emulator/keys/${id}/revoke`)).status).toBe('revoked')
    expectFailure(await h.call('GET', '/v1/programs', { key }), 401, 'invalid_api_key')
    expectFailure(await h.call('POST', `/emulator/keys/${id}/resume`), 409, 'key_revoked')
    expectFailure(await h.call('POST', `/emulator/keys/${id}/roll`), 409, 'key_revoked')
    expectFailure(await h.call('GET', '/v1/programs', { key }), 401, 'invalid_api_key')
  })

  it('expiry: 401 from the moment it lapses on the emulator clock', async () => {
    const h = await start()
    const { key } = await newKey(h, { scopes: ['programs:read'], expiresInDays: 30 })
    await h.advance(30 * DAY - 60_000)
    expect((await h.call('GET', '/v1/programs', { key })).status).toBe(200)
    await h.advance(60_000)
    const refused = await h.call('GET', '/v1/programs', { key })
    expectFailure(refused, 401, 'invalid_api_key')
    expect(refused.body.message).toMatch(/expired/)
    expect(limitHeaders(refused)).toEqual([])
  })

  it('an inactive account: 401 on every key and route; the control route turns it back on', async () => {
    const h = await start()
    const { key } = await newKey(h, { scopes: ['webhooks:read', 'programs:read'] })
    ok(await h.call('POST', '/emulator/account', { body: { status: 'inactive' } }))
    for (const [path, used] of [
      ['/v1/me', MAIN_KEY],
      ['/v1/webhooks', MAIN_KEY],
      ['/v1/programs', key],
      ['/v1/programs/applications', key],
    ] as const) {
      const reply = await h.call('GET', path, { key: used })
      expectFailure(reply, 401, 'invalid_api_key')
      expect(limitHeaders(reply)).toEqual([])
    }
    expect((await h.call('GET', '/v1/health', { key: null })).status).toBe(200)
    ok(await h.call('POST', '/emulator/account', { body: { status: 'active' } }))
    expect((await h.call('GET', '/v1/programs', { key })).status).toBe(200)
    expect((await h.call('POST', '/emulator/account', { body: { status: 'closed' } })).status).toBe(
      400,
    )
  })
})

describe('emulator keys: IP allowlist', () => {
  /** An emulator listening on `host`, and one request to it. */
  async function listenOn(host: string) {
    const emulator = createEmulator({ apiKeys: [MAIN_KEY], clock: createClock({ start: START }) })
    emulators.push(emulator)
    const base = await emulator.listen(0, host)
    const call = async (method: string, path: string, key: string, body?: unknown) => {
      const response = await fetch(base + path, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
      return { status: response.status, headers: response.headers, body: await response.json() }
    }
    const keyWith = async (ipAllowlist: string[]) =>
      (await call('POST', '/emulator/keys', MAIN_KEY, { scopes: ['webhooks:read'], ipAllowlist }))
        .body.data.key as string
    return { call, keyWith }
  }

  it('IPv4: an address or a CIDR range lets the caller in; outside it, 403 ip_not_allowed with ip, whatever the scope', async () => {
    const { call, keyWith } = await listenOn('127.0.0.1')
    for (const list of [['127.0.0.1'], ['127.0.0.0/8'], ['10.0.0.0/8', '127.0.0.1/32']]) {
      expect((await call('GET', '/v1/webhooks', await keyWith(list))).status, String(list)).toBe(
        200,
      )
    }
    const outside = await keyWith(['10.0.0.0/8', '192.168.1.7', '::1'])
    for (const [method, path] of [
      ['GET', '/v1/webhooks'],
      ['POST', '/v1/webhooks'], // a scope the key lacks: the address is checked first
      ['GET', '/v1/me'],
    ] as const) {
      const reply = await call(method, path, outside)
      expectFailure(reply, 403, 'ip_not_allowed')
      expect(reply.body.error.ip).toBe('127.0.0.1')
      expect(limitHeaders(reply)).toEqual([])
    }
    // Refusals for the address do not count.
    const me = await call('GET', '/v1/me', MAIN_KEY)
    expect(me.headers.get('x-quota-used')).toBe('3')
  })

  it('IPv6: an address or a range lets ::1 in; an IPv4-only list refuses it with ip ::1', async () => {
    const { call, keyWith } = await listenOn('::1')
    expect((await call('GET', '/v1/webhooks', await keyWith(['::1']))).status).toBe(200)
    expect((await call('GET', '/v1/webhooks', await keyWith(['::/64']))).status).toBe(200)
    expect(
      (await call('GET', '/v1/webhooks', await keyWith(['10.0.0.0/8', '::1/128']))).status,
    ).toBe(200)
    const refused = await call('GET', '/v1/webhooks', await keyWith(['127.0.0.1', '2001:db8::/32']))
    expectFailure(refused, 403, 'ip_not_allowed')
    expect(refused.body.error.ip).toBe('::1')
    const me = await call('GET', '/v1/me', MAIN_KEY)
    expect(me.body.data.callerIp).toBe('::1')
  })
})

describe('emulator limits: every request that passes the key carries the headers', () => {
  it('413 and an unknown route with a valid key carry the rate-limit and quota headers and count; without one they do not', async () => {
    const h = await start()
    const huge = `{"url":"${'a'.repeat(1_100_000)}"}`
    const tooLarge = await h.call('POST', '/v1/webhooks', { raw: huge })
    expectFailure(tooLarge, 413, 'payload_too_large')
    expect(limitHeaders(tooLarge)).toEqual(LIMIT_HEADERS)
    expect(tooLarge.headers.get('x-quota-used')).toBe('0')
    const unknown = await h.call('GET', '/v1/nothing')
    expectFailure(unknown, 404, 'route_not_found')
    expect(limitHeaders(unknown)).toEqual(LIMIT_HEADERS)
    expect(unknown.headers.get('x-quota-used')).toBe('1')
    const noV1 = await h.call('GET', '/webhooks')
    expectFailure(noV1, 404, 'route_not_found')
    expect(noV1.headers.get('x-ratelimit-remaining')).toBe('117')
    // Without a key there is no account to count them against.
    const anonymous = await h.call('GET', '/v1/nothing', { key: null })
    expectFailure(anonymous, 404, 'route_not_found')
    expect(limitHeaders(anonymous)).toEqual([])
    const anonymousLarge = await h.call('POST', '/v1/webhooks', { raw: huge, key: null })
    expectFailure(anonymousLarge, 413, 'payload_too_large')
    expect(limitHeaders(anonymousLarge)).toEqual([])
    expect((await h.call('GET', '/v1/me')).headers.get('x-quota-used')).toBe('3')
  })

  it('X-RateLimit-Reset is the window own end on the emulator clock: a multiple of 60, the same all window long', async () => {
    const h = await start({ clock: createClock({ start: START + 17_500 }) })
    const resets = new Set<string | null>()
    for (let i = 0; i < 5; i++) {
      resets.add((await h.call('GET', '/v1/me')).headers.get('x-ratelimit-reset'))
      await h.advance(7_000)
    }
    expect([...resets]).toEqual([String(START / 1000 + 60)])
    await h.advance(20_000)
    const next = Number((await h.call('GET', '/v1/me')).headers.get('x-ratelimit-reset'))
    expect(next).toBe(START / 1000 + 120)
    expect(next % 60).toBe(0)
  })
})

describe('emulator state file: the account survives a restart', () => {
  it('keys (made by control routes, paused, rolled), programs, channels, applications and the account status', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emulator-account-'))
    const statePath = join(dir, 'state.json')
    try {
      const first = await startEmulator({ apiKeys: [MAIN_KEY], statePath })
      const made = ok(
        await first.call('POST', '/emulator/keys', {
          body: { scopes: ['programs:read'], ipAllowlist: ['127.0.0.1'] },
        }),
        201,
      )
      const paused = ok(
        await first.call('POST', '/emulator/keys', { body: { scopes: ['programs:read'] } }),
        201,
      )
      ok(await first.call('POST', `/emulator/keys/${paused.id}/pause`))
      const rolled = ok(await first.call('POST', `/emulator/keys/${made.id}/roll`))
      const program = ok(
        await first.call('POST', '/emulator/programs', {
          body: { merchantName: 'Kept', approvalType: 'manual' },
        }),
        201,
      )
      ok(await first.call('DELETE', '/emulator/programs/40'))
      const channel = ok(
        await first.call('POST', '/emulator/channels', { body: { domain: 'kept.example' } }),
        201,
      )
      const application = ok(
        await first.call('POST', '/v1/programs/applications', {
          body: { programId: program.id, channelId: channel.id },
        }),
        201,
      )
      await first.close()

      const second = await startEmulator({ apiKeys: [MAIN_KEY], statePath })
      expect(ok(await second.call('GET', '/v1/me', { key: rolled.key }))).toMatchObject({
        ipAllowlist: ['127.0.0.1'],
      })
      const old = await second.call('GET', '/v1/me', { key: made.key })
      expectFailure(old, 401, 'invalid_api_key')
      expect(old.body.error).toHaveProperty('rotatedAt')
      expectFailure(await second.call('GET', '/v1/me', { key: paused.key }), 401, 'invalid_api_key')
      ok(await second.call('POST', `/emulator/keys/${paused.id}/resume`))
      expect((await second.call('GET', '/v1/me', { key: paused.key })).status).toBe(200)
      expect(ok(await second.call('GET', `/v1/programs/${program.id}`)).merchantName).toBe('Kept')
      expectFailure(await second.call('GET', '/v1/programs/40'), 404, 'program_not_found')
      const again = await second.call('POST', '/v1/programs/applications', {
        body: { programId: program.id, channelId: channel.id },
      })
      expectFailure(again, 409, 'duplicate_application')
      expect(again.body.error.applicationId).toBe(application.applicationId)
      ok(await second.call('POST', '/emulator/account', { body: { status: 'inactive' } }))
      await second.close()

      const third = await startEmulator({ apiKeys: [MAIN_KEY], statePath })
      try {
        expectFailure(await third.call('GET', '/v1/me'), 401, 'invalid_api_key')
      } finally {
        await third.close()
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

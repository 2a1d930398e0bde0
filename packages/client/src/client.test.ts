import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createClient, isServiceError, ServiceError } from './index.js'
import { followDelivery } from './internal.js'

const KEY = `la_${'k'.repeat(28)}Zq9x`

type Reply =
  | { status: number; body?: unknown; headers?: Record<string, string>; raw?: string }
  | 'drop'
type Route = (request: {
  method: string
  url: URL
  body: unknown
  auth: string | undefined
}) => Reply

const servers: Server[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((done) => server.close(done))))
})

/** A server that answers each request with `route`, and records what it got. */
async function serve(route: Route) {
  const seen: { method: string; path: string; auth: string | undefined }[] = []
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const text = Buffer.concat(chunks).toString('utf8')
    const url = new URL(req.url ?? '/', 'http://localhost')
    seen.push({
      method: req.method ?? '',
      path: url.pathname + url.search,
      auth: req.headers.authorization,
    })
    const reply = route({
      method: req.method ?? '',
      url,
      body: text ? JSON.parse(text) : undefined,
      auth: req.headers.authorization,
    })
    if (reply === 'drop') {
      req.socket.destroy()
      return
    }
    res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers })
    res.end(reply.raw ?? JSON.stringify(reply.body))
  })
  servers.push(server)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    baseUrl,
    seen,
    client: createClient({ apiKey: KEY, baseUrl, retry: { baseDelayMs: 5, maxDelayMs: 20 } }),
  }
}

/** The address of a port nothing listens on. */
async function closedPort() {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  await new Promise((done) => server.close(done))
  return `http://127.0.0.1:${port}`
}

const ok = (data: unknown, status = 200): Reply => ({
  status,
  body: { success: true, message: 'ok', data },
})
const fail = (status: number, error: unknown, headers: Record<string, string> = {}): Reply => ({
  status,
  headers,
  body: { success: false, message: `refused ${JSON.stringify(error)}`, error },
})
const endpoint = (id: string, url = 'https://example.com/hooks') => ({
  id,
  url,
  events: ['conversion.created'],
  description: null,
  status: 'active',
  consecutiveFailures: 0,
  disabledAt: null,
  lastDeliveryAt: null,
  region: 'eu',
})
const caught = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected a rejection')
    },
    (error: unknown) => error as ServiceError,
  )

describe('createClient(options)', () => {
  it.each([
    [undefined, /apiKey is missing; set AFFILIATE_API_KEY/],
    ['', /apiKey is missing/],
    [`sk_${'x'.repeat(32)}`, /does not start with la_/],
    ['la_short', /5 characters after la_, not 32/],
    [` ${KEY}`, /does not start with la_/],
    [`${KEY} `, /white space/],
  ])('refuses apiKey %j with a message that does not repeat it', (apiKey, message) => {
    let error: unknown
    try {
      createClient({ apiKey, baseUrl: 'http://127.0.0.1:1' })
    } catch (thrown) {
      error = thrown
    }
    expect(error).toBeInstanceOf(TypeError)
    expect(String((error as Error).message)).toMatch(message)
    if (apiKey) expect((error as Error).message).not.toContain(apiKey.trim())
  })

  it.each([
    [undefined, /baseUrl is missing; set AFFILIATE_API_URL/],
    ['not a url', /is not a URL/],
    ['ftp://example.com', /must be http\(s\)/],
  ])('refuses baseUrl %j', (baseUrl, message) => {
    expect(() => createClient({ apiKey: KEY, baseUrl })).toThrow(message)
  })

  it('adds /v1 itself, with or without it in the base URL', async () => {
    const { baseUrl, seen } = await serve(() => ok([]))
    for (const base of [baseUrl, `${baseUrl}/`, `${baseUrl}/v1`, `${baseUrl}/v1/`]) {
      await createClient({ apiKey: KEY, baseUrl: base }).webhooks.list()
    }
    expect(seen.map((r) => r.path)).toEqual(Array(4).fill('/v1/webhooks'))
    expect(seen.every((r) => r.auth === `Bearer ${KEY}`)).toBe(true)
  })

  it('health() sends no key; me() does', async () => {
    const { client, seen } = await serve(({ url }) =>
      url.pathname === '/v1/health'
        ? ok({ status: 'ok' })
        : ok({ callerIp: '127.0.0.1', name: 'ci' }),
    )
    expect(await client.health()).toEqual({ status: 'ok' })
    expect(await client.me()).toEqual({ callerIp: '127.0.0.1', name: 'ci' })
    expect(seen.map((r) => r.auth)).toEqual([undefined, `Bearer ${KEY}`])
  })
})

describe('answers', () => {
  it('keeps fields the types do not name', async () => {
    const { client } = await serve(() => ok(endpoint('we_1')))
    const got = await client.webhooks.get('we_1')
    expect(got.region).toBe('eu')
    expect(got.consecutiveFailures).toBe(0)
  })

  it('turns every error into a ServiceError with its code and extra fields', async () => {
    const errors: Record<string, Reply> = {
      '/v1/webhooks/a': fail(403, {
        code: 'insufficient_scope',
        required: 'webhooks:write',
        granted: ['webhooks:read'],
      }),
      '/v1/webhooks/b': fail(403, { code: 'ip_not_allowed', ip: '2001:db8::1' }),
      '/v1/webhooks/c': fail(401, { code: 'invalid_api_key', rotatedAt: '2026-11-01T00:00:00Z' }),
      '/v1/webhooks/d': fail(404, { code: 'webhook_not_found' }),
      '/v1/webhooks/e': fail(400, [
        { field: 'url', code: 'invalid_format', message: 'must be https' },
        { field: 'events', code: 'required', message: 'required' },
      ]),
      '/v1/webhooks/f': fail(409, { code: 'brand_new_code', hint: 42 }),
    }
    const { client } = await serve(
      ({ url }) => errors[url.pathname] ?? fail(500, { code: 'internal_error' }),
    )
    const a = await caught(client.webhooks.get('a'))
    expect(isServiceError(a)).toBe(true)
    expect(a).toMatchObject({
      status: 403,
      code: 'insufficient_scope',
      required: 'webhooks:write',
      granted: ['webhooks:read'],
    })
    expect(a.message).toMatch(/needs webhooks:write; the key has webhooks:read/)
    expect(await caught(client.webhooks.get('b'))).toMatchObject({
      code: 'ip_not_allowed',
      ip: '2001:db8::1',
    })
    expect(await caught(client.webhooks.get('c'))).toMatchObject({
      status: 401,
      code: 'invalid_api_key',
      rotatedAt: '2026-11-01T00:00:00Z',
    })
    expect(await caught(client.webhooks.get('d'))).toMatchObject({
      status: 404,
      code: 'webhook_not_found',
    })
    const e = await caught(client.webhooks.get('e'))
    expect(e).toMatchObject({ status: 400, code: 'validation_failed' })
    expect(e.fields).toEqual([
      { field: 'url', code: 'invalid_format', message: 'must be https' },
      { field: 'events', code: 'required', message: 'required' },
    ])
    expect(e.message).toMatch(/url invalid_format \(must be https\), events required \(required\)/)
    expect(await caught(client.webhooks.get('f'))).toMatchObject({
      code: 'brand_new_code',
      extra: { hint: 42 },
    })
  })

  it('an HTML page or an empty answer is invalid_response, naming the base URL as the suspect', async () => {
    const { client } = await serve(({ url }) =>
      url.pathname.endsWith('/html')
        ? { status: 502, raw: '<html>Bad gateway</html>', headers: { 'content-type': 'text/html' } }
        : { status: 200, raw: '' },
    )
    const html = await caught(client.webhooks.get('html'))
    expect(html).toMatchObject({ status: 502, code: 'invalid_response' })
    expect(html.message).toMatch(
      /502 with text\/html, not the API's JSON envelope; is the base URL/,
    )
    expect(await caught(client.webhooks.get('empty'))).toMatchObject({ code: 'invalid_response' })
  })

  it('no answer at all is network_error, status 0', async () => {
    const client = createClient({
      apiKey: KEY,
      baseUrl: await closedPort(),
      retry: { retries: 1, baseDelayMs: 1 },
    })
    const error = await caught(client.webhooks.list())
    expect(error).toMatchObject({ status: 0, code: 'network_error' })
    expect(error.message).toMatch(/ECONNREFUSED/)
  })

  it('never puts the key in a message, even when the service echoes it', async () => {
    const { client } = await serve(({ auth }) =>
      fail(401, { code: 'invalid_api_key', message: `bad ${auth}` }),
    )
    const error = await caught(client.webhooks.list())
    expect(error.message).toContain('la_…Zq9x')
    expect(JSON.stringify({ ...error, message: error.message, stack: error.stack })).not.toContain(
      KEY,
    )
  })
})

describe('retries', () => {
  it('waits out 429 rate_limited for Retry-After, then succeeds', async () => {
    let calls = 0
    const { client, seen } = await serve(() =>
      ++calls === 1 ? fail(429, { code: 'rate_limited' }, { 'retry-after': '1' }) : ok([]),
    )
    const started = performance.now()
    expect(await client.webhooks.list()).toEqual([])
    expect(performance.now() - started).toBeGreaterThanOrEqual(950)
    expect(seen).toHaveLength(2)
  })

  it('does not wait out quota_exceeded: it fails at once with a clear error', async () => {
    const { client, seen } = await serve(() =>
      fail(429, { code: 'quota_exceeded' }, { 'retry-after': String(9 * 24 * 3600) }),
    )
    const error = await caught(client.webhooks.list())
    expect(error).toMatchObject({ status: 429, code: 'quota_exceeded', retryAfter: 9 * 24 * 3600 })
    expect(error.message).toMatch(
      /monthly quota is used up; it resets on the 1st, UTC, in 216 h: not waited out/,
    )
    expect(seen).toHaveLength(1)
  })

  it('repeats reads after 5xx and dropped connections, up to `retries`', async () => {
    let calls = 0
    const { client, seen } = await serve(() =>
      ++calls === 1 ? 'drop' : calls === 2 ? fail(503, { code: 'internal_error' }) : ok([]),
    )
    expect(await client.webhooks.list()).toEqual([])
    expect(seen).toHaveLength(3)
    const { client: failing, seen: seenFailing } = await serve(() =>
      fail(500, { code: 'internal_error' }),
    )
    expect(await caught(failing.webhooks.list())).toMatchObject({
      status: 500,
      code: 'internal_error',
    })
    expect(seenFailing).toHaveLength(4)
  })

  it('never repeats 4xx', async () => {
    const { client, seen } = await serve(() => fail(404, { code: 'webhook_not_found' }))
    await caught(client.webhooks.update('x', { status: 'active' }))
    expect(seen).toHaveLength(1)
  })

  describe('create: a lost answer never leaves two endpoints', () => {
    for (const loss of ['500 after creating', 'connection dropped after creating'] as const) {
      it(`${loss}: finds the endpoint it made and rotates its secret`, async () => {
        const endpoints = [endpoint('we_old', 'https://example.com/hooks')]
        let rotations = 0
        const { client, seen } = await serve(({ method, url, body }) => {
          if (method === 'GET') return ok(endpoints)
          if (url.pathname === '/v1/webhooks') {
            const input = body as { url: string; events: string[] }
            endpoints.unshift({
              ...endpoint(`we_${endpoints.length}`, input.url),
              events: input.events,
            })
            return loss === '500 after creating' ? fail(500, { code: 'internal_error' }) : 'drop'
          }
          if (url.pathname.endsWith('/rotate-secret')) {
            rotations++
            return ok({ ...endpoints[0], secret: 'whsec_rotated' })
          }
          return fail(404, { code: 'route_not_found' })
        })
        // An endpoint with the same URL that existed before is not mistaken for the new one.
        const made = await client.webhooks.create({
          url: 'https://example.com/hooks',
          events: ['conversion.created'],
        })
        expect(made).toMatchObject({ id: 'we_1', secret: 'whsec_rotated' })
        expect(endpoints).toHaveLength(2)
        expect(rotations).toBe(1)
        expect(seen.filter((r) => r.method === 'POST' && r.path === '/v1/webhooks')).toHaveLength(1)
      })
    }

    it('500 before creating: creates again, once', async () => {
      const endpoints: ReturnType<typeof endpoint>[] = []
      let posts = 0
      const { client } = await serve(({ method, body }) => {
        if (method === 'GET') return ok(endpoints)
        if (++posts === 1) return fail(500, { code: 'internal_error' })
        const made = { ...endpoint('we_new', (body as { url: string }).url), secret: 'whsec_first' }
        endpoints.push(made)
        return ok(made, 201)
      })
      const made = await client.webhooks.create({
        url: 'https://example.com/a',
        events: ['conversion.created'],
      })
      expect(made.secret).toBe('whsec_first')
      expect(endpoints).toHaveLength(1)
      expect(posts).toBe(2)
    })
  })

  it('sendTest is not repeated after a lost answer, and says so', async () => {
    const { client, seen } = await serve(() => fail(500, { code: 'internal_error' }))
    const error = await caught(client.webhooks.sendTest('we_1'))
    expect(error.message).toMatch(/not repeated: the test event may have been queued/)
    expect(seen).toHaveLength(1)
  })

  it('replay retried into 409 delivery_not_replayable is the first try having worked', async () => {
    let calls = 0
    const { client } = await serve(() =>
      ++calls === 1 ? 'drop' : fail(409, { code: 'delivery_not_replayable' }),
    )
    expect(await client.webhooks.replay('we_1', 'dl_1')).toEqual({
      deliveryId: 'dl_1',
      outcome: 'already_replaying',
    })
  })

  it('replay answered 409 on the first try is an error (it was still pending)', async () => {
    const { client } = await serve(() => fail(409, { code: 'delivery_not_replayable' }))
    expect(await caught(client.webhooks.replay('we_1', 'dl_1'))).toMatchObject({
      code: 'delivery_not_replayable',
    })
  })

  it('delete retried into 404 webhook_not_found is the first try having worked', async () => {
    let calls = 0
    const { client } = await serve(() =>
      ++calls === 1
        ? fail(502, { code: 'internal_error' })
        : fail(404, { code: 'webhook_not_found' }),
    )
    await expect(client.webhooks.delete('we_1')).resolves.toBeUndefined()
    const { client: plain } = await serve(() => fail(404, { code: 'webhook_not_found' }))
    expect(await caught(plain.webhooks.delete('we_1'))).toMatchObject({ code: 'webhook_not_found' })
  })
})

describe('deliveries(id)', () => {
  it('walks every page with the filter, and yields a row shifted onto the next page once', async () => {
    const rows = Array.from({ length: 7 }, (_, i) => ({
      id: `dl_${i}`,
      status: 'failed',
      responseStatus: 500,
      responseBody: '',
      durationMs: 1,
    }))
    const { client, seen } = await serve(({ url }) => {
      const page = Number(url.searchParams.get('page'))
      const size = Number(url.searchParams.get('size'))
      // Page 2 repeats the last row of page 1, as an offset walk does when a delivery is added.
      const start = (page - 1) * size - (page > 1 ? 1 : 0)
      return ok(rows.slice(start, start + size))
    })
    const got = []
    for await (const delivery of client.webhooks.deliveries('we_1', { status: 'failed', size: 3 }))
      got.push(delivery.id)
    expect(got).toEqual(rows.map((r) => r.id))
    expect(seen[0]?.path).toBe('/v1/webhooks/we_1/deliveries?status=failed&page=1&size=3')
  })

  it('stops at the first delivery older than since, without asking for more pages', async () => {
    const at = (minutes: number) => new Date(Date.UTC(2026, 10, 20, 12, minutes)).toISOString()
    const rows = [50, 40, 30, 20, 10].map((minute) => ({
      id: `dl_${minute}`,
      status: 'failed',
      createdAt: at(minute),
    }))
    const { client, seen } = await serve(({ url }) => {
      const page = Number(url.searchParams.get('page'))
      return ok(rows.slice((page - 1) * 2, page * 2))
    })
    const got = []
    const since = new Date(at(30))
    for await (const delivery of client.webhooks.deliveries('we_1', { since, size: 2 }))
      got.push(delivery.id)
    expect(got).toEqual(['dl_50', 'dl_40', 'dl_30'])
    expect(seen).toHaveLength(2)
  })
})

describe('pacing under the rate limit', () => {
  it('keeps every window under its limit, with no 429, across concurrent calls', async () => {
    // A fixed window of 2 s and 10 requests: the service's rule, scaled down in time.
    const WINDOW = 2
    const LIMIT = 10
    const counts = new Map<number, number>()
    let limited = 0
    const { client } = await serve(() => {
      const now = Date.now() / 1000
      const window = Math.floor(now / WINDOW)
      const used = (counts.get(window) ?? 0) + 1
      counts.set(window, used)
      const reset = (window + 1) * WINDOW
      const headers = {
        'x-ratelimit-limit': String(LIMIT),
        'x-ratelimit-remaining': String(Math.max(0, LIMIT - used)),
        'x-ratelimit-reset': String(reset),
      }
      if (used > LIMIT) {
        limited++
        return fail(
          429,
          { code: 'rate_limited' },
          { ...headers, 'retry-after': String(Math.ceil(reset - now)) },
        )
      }
      return {
        status: 202,
        headers,
        body: { success: true, message: 'queued', data: { deliveryId: 'x' } },
      }
    })
    await client.webhooks.list() // learns the window
    const work = Array.from({ length: 25 }, (_, i) => i)
    const workers = Array.from({ length: 4 }, async () => {
      for (let next = work.shift(); next !== undefined; next = work.shift()) {
        await client.webhooks.replay('we_1', `dl_${next}`)
      }
    })
    await Promise.all(workers)
    expect(limited).toBe(0)
    expect(Math.max(...counts.values())).toBeLessThanOrEqual(LIMIT)
    expect(client.rateLimit).toMatchObject({ limit: LIMIT })
  }, 20_000)

  it('one AbortSignal cancels a call waiting for the window', async () => {
    const { client } = await serve(() =>
      fail(429, { code: 'rate_limited' }, { 'retry-after': '30' }),
    )
    const controller = new AbortController()
    const call = client.webhooks.list({ signal: controller.signal })
    setTimeout(() => controller.abort(new Error('stopped by the user')), 50)
    const started = performance.now()
    await expect(call).rejects.toThrow('stopped by the user')
    expect(performance.now() - started).toBeLessThan(5_000)
  })
})

it('ServiceError is one class with the code to branch on', () => {
  const error = new ServiceError(409, 'webhook_limit_reached', 'five already')
  expect(error).toBeInstanceOf(Error)
  expect(error.name).toBe('ServiceError')
  expect(isServiceError({ code: 'x' })).toBe(false)
})

describe('followDelivery', () => {
  it('yields the delivery after each attempt, once per change, until it settles', async () => {
    const states = [
      { status: 'pending', attempts: 0, responseStatus: null },
      { status: 'retrying', attempts: 1, responseStatus: 500 },
      { status: 'retrying', attempts: 1, responseStatus: 500 },
      { status: 'succeeded', attempts: 2, responseStatus: 200 },
    ]
    let call = 0
    const { client } = await serve(() => {
      const state = states[Math.min(call++, states.length - 1)]
      return ok([
        { id: 'dl_1', durationMs: 3, ...state },
        { id: 'dl_other', status: 'failed' },
      ])
    })
    const seen = []
    for await (const delivery of followDelivery(client, 'we_1', 'dl_1', { intervalMs: 1 })) {
      seen.push(`${delivery.status}/${delivery.attempts}`)
    }
    expect(seen).toEqual(['retrying/1', 'succeeded/2'])
    expect(call).toBe(4)
  })
})

import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import { describe, expect, it, vi } from 'vitest'
import { affiliateWebhook, readRequestBody } from './index.js'

const SECRET = 'whsec_web_handler_test'

describe('@affiliate-webhooks/web', () => {
  it('reads a declared body whole, and refuses one declared over the limit before reading', async () => {
    const body = new TextEncoder().encode('{"a":1}')
    const ok = new Request('http://x/', {
      method: 'POST',
      body,
      headers: { 'content-length': '7' },
    })
    expect([...(await readRequestBody(ok, 7))]).toEqual([...body])
    const big = new Request('http://x/', {
      method: 'POST',
      body,
      headers: { 'content-length': '8' },
    })
    await expect(readRequestBody(big, 7)).rejects.toMatchObject({ code: 'payload_too_large' })
    expect(big.bodyUsed).toBe(false)
  })

  it('answers a body a middleware already read (Astro: await context.request.json()) 500 raw_body_unavailable at once, logged with the event id and the fix', async () => {
    const error = vi.fn()
    const handler = affiliateWebhook({
      secret: SECRET,
      onConversion: () => {},
      logger: { warn() {}, error },
    })
    const event = buildConversionEvent()
    const { headers, body } = await signedDelivery({ secret: SECRET, event })
    const request = new Request('http://x/hooks', { method: 'POST', headers, body })
    await request.json()
    const response = await handler(request)
    expect(response.status).toBe(500)
    expect(await response.json()).toMatchObject({
      error: { code: 'raw_body_unavailable', adapter: 'web' },
    })
    expect(error).toHaveBeenCalledTimes(1)
    expect(error.mock.calls[0]?.[0]).toMatch(
      new RegExp(
        `^affiliate-webhooks: 500 raw_body_unavailable ${event.id} \\(unverified id, attempt 1\\): .*request\\.clone\\(\\)`,
      ),
    )
  })

  it('answers a body stream another reader holds (locked) raw_body_unavailable, not a wait', async () => {
    const request = new Request('http://x/', { method: 'POST', body: '{"a":1}' })
    request.body?.getReader()
    await expect(readRequestBody(request, 100)).rejects.toMatchObject({
      code: 'raw_body_unavailable',
      message: expect.stringMatching(/^Another reader holds the body stream/),
    })
  })

  it('lets go of a body that stops giving bytes when the signal aborts, with its reason', async () => {
    const stalled = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"a":'))
      },
    })
    // As a server hands it over: headers, a body stream, nothing read yet.
    const request = { bodyUsed: false, headers: new Headers(), body: stalled } as Request
    const reading = readRequestBody(request, 100, AbortSignal.timeout(200))
    await expect(reading).rejects.toMatchObject({ name: 'TimeoutError' })
    // The lock is released: the stream is not held for a body that will not come.
    expect(stalled.locked).toBe(false)
  })

  it('answers a body still arriving at bodyTimeoutMs 408 body_timeout with Connection: close, one warn line', async () => {
    const warn = vi.fn()
    const error = vi.fn()
    const handler = affiliateWebhook({
      secret: 'whsec_web_deadline',
      onConversion: () => {},
      bodyTimeoutMs: 300,
      logger: { warn, error },
    })
    const trickle = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{'))
      },
    })
    const started = performance.now()
    const response = await handler(
      new Request('http://x/hooks', {
        method: 'POST',
        body: trickle,
        duplex: 'half',
      } as RequestInit),
    )
    expect(performance.now() - started).toBeGreaterThanOrEqual(290)
    expect(response.status).toBe(408)
    expect(response.headers.get('connection')).toBe('close')
    const { error: answered } = await response.json()
    expect(answered.code).toBe('body_timeout')
    // A byte came: a stall or a trickle, as before.
    expect(answered.message).toMatch(/^The body had not fully arrived 0\.3 s after/)
    expect(warn).toHaveBeenCalledTimes(1)
    expect(error).not.toHaveBeenCalled()
  })

  it('when no byte arrived by bodyTimeoutMs, the 408 names the likelier cause: something before it read the body (Nuxt: toWebRequest(event).json())', async () => {
    const handler = affiliateWebhook({
      secret: 'whsec_web_deadline',
      onConversion: () => {},
      bodyTimeoutMs: 200,
      logger: false,
    })
    // What a handler gets after a middleware drained the request it came from: a stream that never ends.
    const drained = new ReadableStream<Uint8Array>({ start() {} })
    const response = await handler(
      new Request('http://x/hooks', {
        method: 'POST',
        body: drained,
        duplex: 'half',
      } as RequestInit),
    )
    expect(response.status).toBe(408)
    const { error: answered } = await response.json()
    expect(answered.code).toBe('body_timeout')
    expect(answered.message).toBe(
      "No byte of the body arrived in 0.2 s. Likely something before this handler read it (a middleware's request.json(); Nuxt/Nitro: toWebRequest(event).json(), where the h3 adapter answers 500 at once); else the client stalled.",
    )
  })

  it('does not trust a Content-Length that is not a number to bound the read', async () => {
    const request = new Request('http://x/', {
      method: 'POST',
      body: 'x'.repeat(100),
      headers: { 'content-length': 'abc' },
    })
    await expect(readRequestBody(request, 10)).rejects.toMatchObject({ code: 'payload_too_large' })
  })

  it('takes options as a function of env, called once, on the first request', async () => {
    const onConversion = vi.fn()
    const options = vi.fn((env: { SECRET: string }) => ({
      secret: env.SECRET,
      onConversion,
      logger: false as const,
    }))
    const handler = affiliateWebhook(options)
    expect(options).not.toHaveBeenCalled()
    for (let attempt = 1; attempt <= 2; attempt++) {
      const { headers, body } = await signedDelivery({
        secret: SECRET,
        event: buildConversionEvent({ id: 'evt_web_env_0001' }),
        attempt,
      })
      const response = await handler(new Request('http://x/', { method: 'POST', headers, body }), {
        SECRET,
      })
      expect(response.status).toBe(200)
    }
    expect(options).toHaveBeenCalledTimes(1)
    expect(onConversion).toHaveBeenCalledTimes(1)
  })
})

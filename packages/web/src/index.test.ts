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

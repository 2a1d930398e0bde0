import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import type { NextApiRequest, NextApiResponse } from 'next'
// The parser Next runs on a Pages API route unless `config.api.bodyParser` is false.
import { parseBody } from 'next/dist/server/api-utils/node/parse-body.js'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { SECRET, send } from '../../../test/support/conformance-cases.js'
import { affiliateWebhook, affiliateWebhookPages } from './index.js'

async function signedRequest(event: object = buildConversionEvent(), init: RequestInit = {}) {
  const { headers, body } = await signedDelivery({ secret: SECRET, event })
  return new Request('http://localhost/api/hooks', { method: 'POST', headers, body, ...init })
}

describe('App Router: export const POST = affiliateWebhook(opts)', () => {
  it('turns a Web Request into a Response (no server needed)', async () => {
    const onConversion = vi.fn()
    const POST = affiliateWebhook({ secret: SECRET, onConversion })
    const event = buildConversionEvent()
    const response = await POST(await signedRequest(event))
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^application\/json/)
    expect(await response.json()).toEqual({ received: true, outcome: 'processed' })
    expect((await (await POST(await signedRequest(event))).json()).outcome).toBe('duplicate')
    expect(onConversion).toHaveBeenCalledTimes(1)
  })

  it('reads a body streamed without Content-Length', async () => {
    const POST = affiliateWebhook({ secret: SECRET, onConversion: () => {} })
    const { headers, body } = await signedDelivery({
      secret: SECRET,
      event: buildConversionEvent(),
    })
    const bytes = new TextEncoder().encode(body)
    // Split inside the body so the pieces must be joined in order.
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.subarray(0, 7))
        controller.enqueue(bytes.subarray(7))
        controller.close()
      },
    })
    const request = new Request('http://localhost/api/hooks', {
      method: 'POST',
      headers,
      body: stream,
      duplex: 'half',
    } as RequestInit)
    expect((await POST(request)).status).toBe(200)
  })

  it('answers 500 raw_body_unavailable naming Next and its own fix when the body was read before it', async () => {
    const onConversion = vi.fn()
    const POST = affiliateWebhook({ secret: SECRET, onConversion })
    const request = await signedRequest()
    await request.json()
    const response = await POST(request)
    expect(response.status).toBe(500)
    const { error } = await response.json()
    expect(error).toMatchObject({ code: 'raw_body_unavailable', adapter: 'next' })
    expect(error.message).toMatch(/^The body was read before the webhook handler/)
    expect(error.message).toContain('Next.js App Router')
    expect(error.message).toContain('request.clone()')
    // Not another stack's fix.
    expect(error.message).not.toMatch(/Astro|SvelteKit|Elysia/)
    expect(onConversion).not.toHaveBeenCalled()
  })

  it('imports nothing Node-only, so an Edge route can use it', () => {
    const source = readFileSync(new URL('../../web/src/index.ts', import.meta.url), 'utf8')
    expect(source).not.toMatch(/from ['"](node:|@affiliate-webhooks\/node)/)
    expect(source).not.toMatch(/\bBuffer\b|\bprocess\./)
  })
})

describe('Pages Router: affiliateWebhookPages(opts)', () => {
  const servers: Server[] = []
  afterEach(async () => {
    vi.restoreAllMocks()
    await Promise.all(
      servers.splice(0).map((server) => {
        const closed = once(server, 'close')
        server.close()
        server.closeAllConnections()
        return closed
      }),
    )
  })

  /** Runs the handler as Next runs an API route, with or without its body parser. */
  async function serve(
    handler: ReturnType<typeof affiliateWebhookPages>,
    bodyParser: boolean,
  ): Promise<string> {
    const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
      const apiReq = req as NextApiRequest
      if (bodyParser) apiReq.body = await parseBody(req, '1mb')
      await handler(apiReq, res as NextApiResponse)
    })
    servers.push(server)
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/hooks`
  }

  it('with bodyParser: false, reads the untouched stream', async () => {
    const onConversion = vi.fn()
    const url = await serve(affiliateWebhookPages({ secret: SECRET, onConversion }), false)
    expect(await send(url, buildConversionEvent())).toMatchObject({
      status: 200,
      json: { outcome: 'processed' },
    })
    expect(onConversion).toHaveBeenCalledTimes(1)
  })

  it('with the body parser left on, answers 500 naming bodyParser: false, one line per delivery, handler not called', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {})
    const onConversion = vi.fn()
    const url = await serve(affiliateWebhookPages({ secret: SECRET, onConversion }), true)
    for (let attempt = 1; attempt <= 2; attempt++) {
      const answer = await send(url, buildConversionEvent())
      expect(answer).toMatchObject({
        status: 500,
        json: { error: { code: 'raw_body_unavailable' } },
      })
      expect(answer.json.error?.message).toContain(
        'export const config = { api: { bodyParser: false } }',
      )
    }
    expect(onConversion).not.toHaveBeenCalled()
    expect(log).toHaveBeenCalledTimes(2)
    expect(String(log.mock.calls[0]?.[0])).toMatch(/500 raw_body_unavailable .*bodyParser: false/)
  })
})

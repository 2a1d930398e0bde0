import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import express5 from 'express'
import express4 from 'express4'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { SECRET, send } from '../../../test/support/conformance-cases.js'
import { affiliateWebhook, rawBodySaver } from './index.js'

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

async function listen(app: ReturnType<typeof express5>): Promise<string> {
  const server = createServer(app)
  servers.push(server)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

const postJson = async (url: string, value: unknown) =>
  (
    await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(value),
    })
  ).json()

describe.each([
  ['express 4', express4 as unknown as typeof express5],
  ['express 5', express5],
])('@affiliate-webhooks/express on %s', (_name, express) => {
  it('app.post(path, affiliateWebhook(opts)) reads the stream itself', async () => {
    const onConversion = vi.fn()
    const app = express()
    app.post('/hooks', affiliateWebhook({ secret: SECRET, onConversion }))
    const url = await listen(app)
    expect(await send(`${url}/hooks`, buildConversionEvent())).toMatchObject({
      status: 200,
      json: { outcome: 'processed' },
    })
    expect(onConversion).toHaveBeenCalledTimes(1)
  })

  it('works before app.use(express.json()), which still parses the other routes', async () => {
    const app = express()
    app.post('/hooks', affiliateWebhook({ secret: SECRET, onConversion: () => {} }))
    app.use(express.json())
    app.post('/api/echo', (req, res) => {
      res.json({ parsed: req.body })
    })
    const url = await listen(app)
    expect((await send(`${url}/hooks`, buildConversionEvent())).status).toBe(200)
    expect(await postJson(`${url}/api/echo`, { a: 1 })).toEqual({ parsed: { a: 1 } })
  })

  it('uses the bytes express.raw() kept', async () => {
    const onConversion = vi.fn()
    const app = express()
    app.post(
      '/hooks',
      express.raw({ type: 'application/json' }),
      affiliateWebhook({ secret: SECRET, onConversion }),
    )
    const url = await listen(app)
    const event = buildConversionEvent()
    const body = { ...event, data: { ...event.data, note: 'Café 東京 🎉' } }
    expect((await send(`${url}/hooks`, body)).status).toBe(200)
    expect(onConversion).toHaveBeenCalledTimes(1)
  })

  it('holds bytes express.raw() kept to maxBodyBytes (413)', async () => {
    const app = express()
    app.post(
      '/hooks',
      express.raw({ type: 'application/json', limit: '1mb' }),
      affiliateWebhook({ secret: SECRET, maxBodyBytes: 2000, onConversion: () => {} }),
    )
    const url = await listen(app)
    const event = buildConversionEvent()
    const padded = { ...event, data: { ...event.data, pad: 'x'.repeat(5000) } }
    expect(await send(`${url}/hooks`, padded)).toMatchObject({
      status: 413,
      json: { error: { code: 'payload_too_large' } },
    })
  })

  it('works after app.use(express.json({ verify: rawBodySaver })), other routes still parsed', async () => {
    const onConversion = vi.fn()
    const app = express()
    app.use(express.json({ verify: rawBodySaver }))
    app.post('/hooks', affiliateWebhook({ secret: SECRET, onConversion }))
    app.post('/api/echo', (req, res) => {
      res.json({ parsed: req.body })
    })
    const url = await listen(app)
    const event = buildConversionEvent()
    expect((await send(`${url}/hooks`, event)).status).toBe(200)
    expect((await send(`${url}/hooks`, event)).json.outcome).toBe('duplicate')
    expect(onConversion).toHaveBeenCalledTimes(1)
    expect(await postJson(`${url}/api/echo`, { b: [2] })).toEqual({ parsed: { b: [2] } })
  })

  it('after a plain express.json() answers 500 raw_body_unavailable naming the fix, one line per delivery: status, code, event id and the fix, handler not called', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {})
    const onConversion = vi.fn()
    const app = express()
    app.use(express.json())
    app.post('/hooks', affiliateWebhook({ secret: SECRET, onConversion }))
    const url = await listen(app)
    for (let attempt = 1; attempt <= 2; attempt++) {
      const answer = await send(`${url}/hooks`, buildConversionEvent())
      expect(answer).toMatchObject({
        status: 500,
        json: { error: { code: 'raw_body_unavailable' } },
      })
      expect(answer.json.error?.message).toMatch(/rawBodySaver/)
      expect(answer.json.error?.message).toMatch(/before app\.use\(express\.json\(\)\)/)
    }
    expect(onConversion).not.toHaveBeenCalled()
    expect(log).toHaveBeenCalledTimes(2)
    expect(String(log.mock.calls[0]?.[0])).toMatch(
      /^affiliate-webhooks: 500 raw_body_unavailable evt_\w+ \(unverified id, attempt 1\): .*rawBodySaver/,
    )
  })

  it('reads the intact stream of a request express.json() skipped (Express 4 still sets req.body = {})', async () => {
    const onConversion = vi.fn()
    const app = express()
    app.use(express.json())
    app.post('/hooks', affiliateWebhook({ secret: SECRET, onConversion }))
    const url = await listen(app)
    const { headers, body } = await signedDelivery({
      secret: SECRET,
      event: buildConversionEvent(),
    })
    const response = await fetch(`${url}/hooks`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'text/plain' },
      body,
      signal: AbortSignal.timeout(5000),
    })
    expect(response.status).toBe(200)
    expect(onConversion).toHaveBeenCalledTimes(1)
  })

  it('answers other methods 405 when mounted with app.all', async () => {
    const app = express()
    app.all('/hooks', affiliateWebhook({ secret: SECRET, onConversion: () => {} }))
    const url = await listen(app)
    const response = await fetch(`${url}/hooks`)
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('POST')
  })
})

describe('rawBodySaver', () => {
  it('keeps the exact buffer on req.rawBody', () => {
    const req = {} as Parameters<typeof rawBodySaver>[0]
    const buf = Buffer.from('{"a":1}')
    rawBodySaver(req, {}, buf)
    expect((req as unknown as { rawBody: Buffer }).rawBody).toBe(buf)
  })
})

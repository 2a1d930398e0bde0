import { once } from 'node:events'
import {
  createServer,
  type IncomingMessage,
  request,
  type Server,
  type ServerResponse,
} from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Conversion } from '@affiliate-webhooks/core'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { affiliateWebhook, type NodeWebhookOptions } from './index.js'

const SECRET = 'whsec_node_adapter_test'
const servers: Server[] = []

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))))
})

async function listen(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<string> {
  const server = createServer(handler)
  servers.push(server)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

async function start(options: Partial<NodeWebhookOptions> = {}) {
  const conversions: Conversion[] = []
  const onConversion = vi.fn((c: Conversion) => {
    conversions.push(c)
  })
  const url = await listen(affiliateWebhook({ secret: SECRET, onConversion, ...options }))
  return { url, onConversion, conversions }
}

async function post(
  url: string,
  event: object | string,
  extraHeaders: Record<string, string> = {},
) {
  const { headers, body } = await signedDelivery({ secret: SECRET, event })
  const response = await fetch(url, {
    method: 'POST',
    headers: { ...headers, ...extraHeaders },
    body,
  })
  return {
    status: response.status,
    json: (await response.json()) as Record<string, unknown>,
    headers: response.headers,
  }
}

describe('@affiliate-webhooks/node affiliateWebhook', () => {
  it('answers a valid delivery 200 processed, then the same event duplicate', async () => {
    const { url, onConversion } = await start()
    const event = buildConversionEvent()
    expect(await post(url, event)).toMatchObject({ status: 200, json: { outcome: 'processed' } })
    expect(await post(url, event)).toMatchObject({ status: 200, json: { outcome: 'duplicate' } })
    expect(onConversion).toHaveBeenCalledTimes(1)
  })

  it('refuses a tampered body with 401 signature_mismatch', async () => {
    const { url, onConversion } = await start()
    const { headers, body } = await signedDelivery({
      secret: SECRET,
      event: buildConversionEvent(),
    })
    const response = await fetch(url, {
      method: 'POST',
      headers,
      body: body.replace('pending', 'approved'),
    })
    expect(response.status).toBe(401)
    expect(await response.json()).toMatchObject({ error: { code: 'signature_mismatch' } })
    expect(onConversion).not.toHaveBeenCalled()
  })

  it('accepts charset=utf-8 and multi-byte UTF-8 bodies byte for byte', async () => {
    const { url, conversions } = await start()
    const event = buildConversionEvent({ conversion: { currency: 'JPY', saleAmount: '1200' } })
    const body = { ...event, data: { ...event.data, merchant: 'Café 東京 🎉' } }
    const result = await post(url, body, { 'content-type': 'application/json; charset=utf-8' })
    expect(result.status).toBe(200)
    expect(conversions[0]?.currency).toBe('JPY')
  })

  it('answers other methods 405 with Allow: POST', async () => {
    const { url } = await start()
    const response = await fetch(url, { method: 'GET' })
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('POST')
    expect(await response.json()).toMatchObject({ error: { code: 'method_not_allowed' } })
  })

  it('with path, answers only that path (query ignored) and 404s others', async () => {
    const { url } = await start({ path: '/hooks' })
    expect((await post(`${url}/hooks?source=test`, buildConversionEvent())).status).toBe(200)
    expect((await post(`${url}/other`, buildConversionEvent())).status).toBe(404)
  })

  it('with path, hands other paths to next() as connect middleware', async () => {
    const middleware = affiliateWebhook({ secret: SECRET, path: '/hooks', onConversion: () => {} })
    const url = await listen((req, res) => middleware(req, res, () => res.end('next')))
    const response = await fetch(`${url}/elsewhere`)
    expect(await response.text()).toBe('next')
  })

  it('refuses a declared oversize body with 413 before reading it', async () => {
    const { url } = await start({ maxBodyBytes: 1000 })
    const result = await post(url, { ...buildConversionEvent(), data: { pad: 'x'.repeat(5000) } })
    expect(result).toMatchObject({ status: 413, json: { error: { code: 'payload_too_large' } } })
  })

  it('stops reading an undeclared (chunked) oversize body and answers 413 before the client is done', async () => {
    const { url } = await start({ maxBodyBytes: 64 * 1024 })
    const { port } = new URL(url)
    const chunk = Buffer.alloc(16 * 1024, 'x')
    const total = 200
    let sent = 0
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({
        host: '127.0.0.1',
        port,
        method: 'POST',
        headers: { 'service-signature': 't=1,v1=00' },
      })
      req.on('response', (res) => {
        resolve(res.statusCode ?? 0)
        res.resume()
        req.destroy()
      })
      req.on('error', (error) => {
        if (sent < total) reject(error)
      })
      // Write slowly so the answer can arrive long before the body would end.
      const pump = (): void => {
        if (sent >= total || req.destroyed) {
          req.end()
          return
        }
        sent++
        req.write(chunk, () => setTimeout(pump, 2))
      }
      pump()
    })
    expect(status).toBe(413)
    expect(sent).toBeLessThan(total)
  })

  it('uses bytes a raw body parser kept in req.body', async () => {
    const middleware = affiliateWebhook({ secret: SECRET, onConversion: () => {} })
    const url = await listen(async (req, res) => {
      const chunks: Buffer[] = []
      for await (const c of req) chunks.push(c as Buffer)
      Object.assign(req, { body: Buffer.concat(chunks) })
      middleware(req, res)
    })
    expect((await post(url, buildConversionEvent())).status).toBe(200)
  })

  it('answers 500 raw_body_unavailable, never hanging, when a JSON parser ran first', async () => {
    const onConversion = vi.fn()
    const middleware = affiliateWebhook({ secret: SECRET, onConversion })
    const url = await listen(async (req, res) => {
      const chunks: Buffer[] = []
      for await (const c of req) chunks.push(c as Buffer)
      Object.assign(req, { body: JSON.parse(Buffer.concat(chunks).toString()) })
      middleware(req, res)
    })
    const result = await post(url, buildConversionEvent())
    expect(result.status).toBe(500)
    expect(result.json).toMatchObject({ error: { code: 'raw_body_unavailable' } })
    expect(String((result.json.error as { message: string }).message)).toMatch(/req\.rawBody/)
    expect(onConversion).not.toHaveBeenCalled()
  })

  it('settles, without answering, for a client gone before the handler ran', async () => {
    const { readRawBody } = await import('./raw-body.js')
    const outcome = new Promise<string>((resolve) => {
      const server = createServer((req) => {
        // A slow middleware in front: the client disconnects meanwhile.
        req.socket.destroy()
        setTimeout(() => {
          readRawBody(req, 1024).then(
            () => resolve('resolved'),
            () => resolve('rejected'),
          )
        }, 50)
      })
      servers.push(server)
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo
        const req = request({
          host: '127.0.0.1',
          port,
          method: 'POST',
          headers: { 'content-length': '100' },
        })
        req.on('error', () => {})
        req.write('{"partial":')
      })
    })
    expect(await outcome).toBe('rejected')
  })

  it('survives a client that disconnects mid-body', async () => {
    const { url, onConversion } = await start()
    const { port } = new URL(url)
    await new Promise<void>((resolve) => {
      const req = request({
        host: '127.0.0.1',
        port,
        method: 'POST',
        headers: { 'content-length': '1000' },
      })
      req.on('error', () => resolve())
      req.write('{"id":', () => setTimeout(() => req.destroy(), 20))
      req.on('close', () => resolve())
    })
    expect((await post(url, buildConversionEvent())).status).toBe(200)
    expect(onConversion).toHaveBeenCalledTimes(1)
  })
})

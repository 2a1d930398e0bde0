import { once } from 'node:events'
import { createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Script } from 'node:vm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newDeliveryRecord } from '../delivery/delivery-record.js'
import { activeEndpoint } from '../delivery/endpoint-state.js'
import type { EndpointRecord } from '../delivery/engine.js'
import { createEmulator, type Emulator } from '../server/create-emulator.js'
import { CONSOLE_HTML, CONSOLE_SCRIPT } from './assets.js'
import { allowedHosts } from './hosts.js'
import { nextStep } from './views.js'

interface Reply {
  status: number
  body: string
}

/** One request with any Host header (fetch would not send a foreign one). */
function send(
  url: string,
  options: {
    method?: string
    host?: string
    headers?: Record<string, string>
    body?: unknown
  } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...options.headers }
    if (options.host) headers.host = options.host
    if (options.body !== undefined) headers['content-type'] = 'application/json'
    const req = request(url, { method: options.method ?? 'GET', headers }, (res) => {
      let body = ''
      res.setEncoding('utf8').on('data', (chunk: string) => {
        body += chunk
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('error', reject)
    req.end(options.body === undefined ? undefined : JSON.stringify(options.body))
  })
}

let emulator: Emulator
let base = ''
let token = ''
let key = ''
const limited = `la_${'L'.repeat(32)}`
const receiver = createServer((req, res) => {
  req.resume()
  res.writeHead(503, { 'content-type': 'application/json' })
  res.end('{"error":{"code":"store_unavailable","message":"redis is down"}}')
})

beforeAll(async () => {
  receiver.listen(0, '127.0.0.1')
  await once(receiver, 'listening')
  emulator = createEmulator({ apiKeys: [`${limited}:webhooks:read`], batchIntervalMs: 0 })
  base = await emulator.listen(0, '127.0.0.1')
  token = new URL(emulator.consoleUrl).searchParams.get('token') as string
  key = emulator.apiKeys[0]?.key as string
})
afterAll(async () => {
  await emulator.close()
  receiver.closeAllConnections()
  receiver.close()
})

const tokenHeader = () => ({ 'x-console-token': token })

describe('the console routes', () => {
  it('consoleUrl is the base URL, /console and a long random token', () => {
    expect(emulator.consoleUrl).toMatch(
      new RegExp(`^${base.replaceAll('.', '\\.')}/console\\?token=[A-Za-z0-9_-]{32}$`),
    )
  })

  it('the page and the script parse, and the page names only its own assets', () => {
    expect(() => new Script(CONSOLE_SCRIPT)).not.toThrow()
    const sources = [...CONSOLE_HTML.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1])
    expect(sources.length).toBeGreaterThan(0)
    for (const source of sources) expect(source).toMatch(/^\/console\//)
    expect(CONSOLE_HTML).not.toMatch(/https?:\/\/(?!www\.w3\.org)/)
  })

  it('answers 421 and nothing else to a foreign Host on every console path, whatever the token', async () => {
    const port = new URL(base).port
    for (const path of [
      '/console',
      '/console/console.js',
      '/console/api/overview',
      '/console/events',
    ]) {
      const reply = await send(`${base}${path}?token=${token}`, {
        host: `attacker.example:${port}`,
        headers: tokenHeader(),
      })
      expect(reply.status, path).toBe(421)
      expect(reply.body).not.toMatch(/\{|<html/)
    }
    const own = await send(`${base}/console/api/overview`, { headers: tokenHeader() })
    expect(own.status).toBe(200)
    expect((await send(`${base}/console`, { host: `localhost:${port}` })).status).toBe(200)
  })

  it('wants the token on its data and events: 401 invalid_api_key without it or with another', async () => {
    for (const headers of [{}, { 'x-console-token': `${token}x` }]) {
      const reply = await send(`${base}/console/api/overview`, { headers })
      expect(reply.status).toBe(401)
      expect(JSON.parse(reply.body).error.code).toBe('invalid_api_key')
    }
    expect((await send(`${base}/console/events`)).status).toBe(401)
  })

  it('hands the token for a key with every scope, 401 for an unknown key, 403 for a limited one', async () => {
    const session = (apiKey: string) =>
      send(`${base}/console/api/session`, { method: 'POST', body: { apiKey } })
    const good = await session(key)
    expect(good.status).toBe(200)
    expect(JSON.parse(good.body).data.token).toBe(token)
    expect((await session(`la_${'z'.repeat(32)}`)).status).toBe(401)
    const partial = await session(limited)
    expect(partial.status).toBe(403)
    expect(JSON.parse(partial.body).error.code).toBe('insufficient_scope')
  })

  it('forwards only the actions the page needs: never the key routes, never creating an endpoint', async () => {
    for (const [method, path] of [
      ['GET', '/console/api/emulator/keys'],
      ['POST', '/console/api/emulator/keys'],
      ['POST', '/console/api/v1/webhooks'],
      ['GET', '/console/api/v1/me'],
    ] as const) {
      const body = method === 'GET' ? undefined : {}
      const reply = await send(`${base}${path}`, { method, headers: tokenHeader(), body })
      expect(reply.status, `${path} ${reply.body}`).toBe(404)
      expect(reply.body).not.toContain(key)
    }
  })

  it('shows an endpoint without its secret, and each attempt with the receiver code, answer and next step', async () => {
    const created = await fetch(`${base}/v1/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`,
        events: ['conversion.created'],
      }),
    })
    const endpoint = (await created.json()).data
    const overview = await send(`${base}/console/api/overview`, { headers: tokenHeader() })
    expect(overview.body).toContain(endpoint.id)
    expect(overview.body).not.toContain(endpoint.secret)

    const trigger = await send(`${base}/console/api/emulator/conversions`, {
      method: 'POST',
      headers: tokenHeader(),
      body: { id: 77, status: 'pending' },
    })
    expect(trigger.status).toBe(200)
    const deliveryId = JSON.parse(trigger.body).data.deliveries[0].id
    await emulator.engine.advance(0)
    const detail = JSON.parse(
      (await send(`${base}/console/api/deliveries/${deliveryId}`, { headers: tokenHeader() })).body,
    ).data
    expect(detail.conversionId).toBe(77)
    expect(detail.status).toBe('retrying')
    expect(detail.next).toMatch(/^attempt 2 at \d\d:\d\d UTC$/)
    expect(detail.rounds[0][0]).toMatchObject({
      attempt: 1,
      responseStatus: 503,
      result: '503',
      errorCode: 'store_unavailable',
      answer: '{"error":{"code":"store_unavailable","message":"redis is down"}}',
    })
    const list = JSON.parse(
      (await send(`${base}/console/api/deliveries?status=retrying`, { headers: tokenHeader() }))
        .body,
    ).data
    expect(list.rows.map((row: { id: string }) => row.id)).toEqual([deliveryId])
    const none = JSON.parse(
      (await send(`${base}/console/api/deliveries?status=failed`, { headers: tokenHeader() })).body,
    ).data
    expect(none.total).toBe(0)
  })

  it('streams an attempt event to an open page when the engine makes one', async () => {
    const events = await new Promise<string>((resolve, reject) => {
      const req = request(`${base}/console/events?token=${token}`, (res) => {
        let text = ''
        res.setEncoding('utf8').on('data', (chunk: string) => {
          text += chunk
          if (text.includes('event: attempt')) {
            req.destroy()
            resolve(text)
          }
        })
        void emulator.engine.advance(60_000)
      })
      req.on('error', reject)
      req.end()
    })
    expect(events).toMatch(/event: attempt\ndata: \{"deliveryId":"dlv_[^"]+","webhookId"/)
  })
})

describe('nextStep', () => {
  const endpoint = (status: 'active' | 'disabled') =>
    ({ state: { ...activeEndpoint(), status } }) as EndpointRecord
  const record = () =>
    newDeliveryRecord({
      id: 'dlv_1',
      webhookId: 'wh_1',
      event: { id: 'evt_1', type: 'conversion.created' },
      body: '{}',
      now: Date.parse('2026-01-01T14:05:00Z'),
    })

  it('says when the next attempt goes, or that a disabled endpoint queues nothing', () => {
    expect(nextStep(record(), endpoint('active'))).toBe('attempt 1 at 14:05 UTC')
    expect(nextStep(record(), endpoint('disabled'))).toMatch(/^endpoint disabled: not queued/)
    const failed = {
      ...record(),
      status: 'failed' as const,
      failedBecause: 'endpoint_disabled' as const,
    }
    expect(nextStep(failed, endpoint('disabled'))).toBe('endpoint disabled: not queued')
  })
})

describe('allowedHosts', () => {
  it('is the bound address and localhost on loopback, and every own address on a wildcard', () => {
    expect([...allowedHosts({ address: '127.0.0.1', family: 'IPv4', port: 4010 })].sort()).toEqual([
      '127.0.0.1:4010',
      'localhost:4010',
    ])
    expect([...allowedHosts({ address: '::1', family: 'IPv6', port: 4010 })].sort()).toEqual([
      '[::1]:4010',
      'localhost:4010',
    ])
    const wildcard = allowedHosts({ address: '0.0.0.0', family: 'IPv4', port: 80 })
    expect(wildcard.has('127.0.0.1:80')).toBe(true)
    expect(wildcard.has('evil.example:80')).toBe(false)
  })
})

import { Writable } from 'node:stream'
import { buildConversionEvent } from '@affiliate-webhooks/core/testing'
import Fastify, { type FastifyInstance } from 'fastify'
import fastifyRawBody from 'fastify-raw-body'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { SECRET, send } from '../../../test/support/conformance-cases.js'
import { affiliateWebhook, affiliateWebhookHandler } from './index.js'

const apps: FastifyInstance[] = []

afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()))
})

async function listen(app: FastifyInstance): Promise<string> {
  apps.push(app)
  return app.listen({ port: 0, host: '127.0.0.1' })
}

const postJson = async (url: string, value: unknown) => {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(value),
  })
  return { status: response.status, json: await response.json() }
}

const withNote = (note: string) => {
  const event = buildConversionEvent()
  return { ...event, data: { ...event.data, note } }
}

/** A Fastify logger writing into an array, to see what the adapter logs. */
function capturedLogger() {
  const lines: { level: number; msg: string }[] = []
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)))
      done()
    },
  })
  return { lines, logger: { level: 'error', stream } }
}

describe('app.register(affiliateWebhook, { path, ...opts })', () => {
  it('adds the route and leaves the app JSON parsing elsewhere untouched', async () => {
    const onConversion = vi.fn()
    const app = Fastify()
    await app.register(affiliateWebhook, { path: '/hooks', secret: SECRET, onConversion })
    app.post('/api/items', async (request) => ({ parsed: request.body }))
    const url = await listen(app)
    expect(await send(`${url}/hooks`, buildConversionEvent())).toMatchObject({
      status: 200,
      json: { outcome: 'processed' },
    })
    expect(onConversion).toHaveBeenCalledTimes(1)
    expect(await postJson(`${url}/api/items`, { sku: 'A-1' })).toEqual({
      status: 200,
      json: { parsed: { sku: 'A-1' } },
    })
    // The app's parser still refuses bad JSON on its routes: the plugin's '*' parser stayed inside.
    const bad = await fetch(`${url}/api/items`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{nope',
    })
    expect(bad.status).toBe(400)
  })

  it('honours a register prefix', async () => {
    const app = Fastify()
    await app.register(affiliateWebhook, {
      prefix: '/webhooks',
      path: '/affiliate',
      secret: SECRET,
      onConversion: () => {},
    })
    const url = await listen(app)
    expect((await send(`${url}/webhooks/affiliate`, buildConversionEvent())).status).toBe(200)
  })

  it('takes its body limit from maxBodyBytes, not the app bodyLimit', async () => {
    const app = Fastify({ bodyLimit: 1000 })
    await app.register(affiliateWebhook, {
      path: '/hooks',
      secret: SECRET,
      maxBodyBytes: 8000,
      onConversion: () => {},
    })
    const url = await listen(app)
    // 3 KB: above the app's limit, within the webhook's.
    expect((await send(`${url}/hooks`, withNote('x'.repeat(3000)))).status).toBe(200)
    expect(await send(`${url}/hooks`, withNote('x'.repeat(9000)))).toMatchObject({
      status: 413,
      json: { error: { code: 'payload_too_large' } },
    })
  })
})

describe('affiliateWebhookHandler(opts) on a route with fastify-raw-body', () => {
  it.each([
    ['default (UTF-8 string)', {}],
    ['encoding: false (Buffer)', { encoding: false as const }],
  ])('verifies multi-byte bodies with %s', async (_name, rawBodyOptions) => {
    const onConversion = vi.fn()
    const app = Fastify()
    await app.register(fastifyRawBody, { global: false, ...rawBodyOptions })
    app.post(
      '/hooks',
      { config: { rawBody: true } },
      affiliateWebhookHandler({ secret: SECRET, onConversion }),
    )
    app.post('/api/items', async (request) => ({ parsed: request.body }))
    const url = await listen(app)
    const event = withNote('Café 東京 — 🎉')
    expect((await send(`${url}/hooks`, event)).json.outcome).toBe('processed')
    expect((await send(`${url}/hooks`, event)).json.outcome).toBe('duplicate')
    expect(onConversion).toHaveBeenCalledTimes(1)
    expect((await postJson(`${url}/api/items`, { n: 1 })).json).toEqual({ parsed: { n: 1 } })
  })

  it('without a raw body answers 500 raw_body_unavailable naming the fix, one line per delivery: status, code, event id and the fix', async () => {
    const error = vi.fn()
    const onConversion = vi.fn()
    const app = Fastify()
    // No fastify-raw-body: Fastify's JSON parser ate the bytes.
    app.post(
      '/hooks',
      affiliateWebhookHandler({ secret: SECRET, onConversion, logger: { warn() {}, error } }),
    )
    const url = await listen(app)
    for (let attempt = 1; attempt <= 2; attempt++) {
      const answer = await send(`${url}/hooks`, buildConversionEvent())
      expect(answer).toMatchObject({
        status: 500,
        json: { error: { code: 'raw_body_unavailable' } },
      })
      expect(answer.json.error?.message).toMatch(/fastify-raw-body.*rawBody: true/)
    }
    expect(onConversion).not.toHaveBeenCalled()
    expect(error).toHaveBeenCalledTimes(2)
    expect(String(error.mock.calls[0]?.[0])).toMatch(
      /^affiliate-webhooks: 500 raw_body_unavailable evt_\w+ \(unverified id, attempt 1\): .*fastify-raw-body/,
    )
  })
})

describe('logger: app.log', () => {
  it("sends the receiver's lines to Fastify's own pino logger", async () => {
    const { lines, logger } = capturedLogger()
    const app = Fastify({ logger })
    await app.register(affiliateWebhook, {
      path: '/hooks',
      secret: SECRET,
      logger: app.log,
      onConversion() {
        throw new Error('warehouse offline')
      },
    })
    const url = await listen(app)
    const event = buildConversionEvent()
    expect((await send(`${url}/hooks`, event)).status).toBe(500)
    const ours = lines.filter((line) => line.msg.startsWith('affiliate-webhooks:'))
    expect(ours).toHaveLength(1)
    expect(ours[0]?.level).toBe(50)
    expect(ours[0]?.msg).toMatch(
      new RegExp(`500 handler_failed ${event.id} .*Error: warehouse offline`),
    )
  })
})

import { buildConversionEvent, signPayload } from '@affiliate-webhooks/core/testing'
import { bodyParser as koaBodyParser } from '@koa/bodyparser'
import Koa from 'koa'
import bodyParser from 'koa-bodyparser'
import Koa2 from 'koa2'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Running } from '../../../test/support/conformance-adapters.js'
import { serve } from '../../../test/support/conformance-adapters.js'
import { SECRET, send } from '../../../test/support/conformance-cases.js'
import { affiliateWebhook } from './index.js'

const running: Running[] = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.close()))
})

async function start(app: Koa): Promise<string> {
  const server = await serve(app.callback())
  running.push(server)
  return server.url
}

/** Posts exact bytes, signed, with the given Content-Type. */
async function postBytes(url: string, bytes: Uint8Array, contentType: string) {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': contentType,
      'service-signature': await signPayload({ secret: SECRET, payload: bytes }),
    },
    body: new Uint8Array(bytes),
  })
  return { status: response.status, json: (await response.json()) as { error?: { code?: string } } }
}

/** A parser that reads the stream and keeps only the parsed object (koa-body's default). */
const parserWithoutRawBody: Koa.Middleware = async (ctx, next) => {
  const chunks: Buffer[] = []
  for await (const chunk of ctx.req) chunks.push(chunk as Buffer)
  Object.assign(ctx.request, { body: JSON.parse(Buffer.concat(chunks).toString('utf8')) })
  await next()
}

describe.each([
  ['koa 2', Koa2],
  ['koa 3', Koa],
])('@affiliate-webhooks/koa on %s', (_name, KoaApp) => {
  it.each([
    ['koa-bodyparser', () => bodyParser()],
    ['@koa/bodyparser', () => koaBodyParser()],
  ])(
    'after %s, verifies the rawBody it kept (multi-byte UTF-8 intact)',
    async (_parser, parser) => {
      const notes: unknown[] = []
      const app = new KoaApp()
      app.use(parser())
      app.use(
        affiliateWebhook({
          path: '/hooks',
          secret: SECRET,
          onConversion: (_conversion, event) => {
            notes.push((event.data as { note?: unknown }).note)
          },
        }),
      )
      const url = await start(app)
      const event = buildConversionEvent()
      const answer = await send(url, { ...event, data: { ...event.data, note: 'Café 東京 🎉' } })
      expect(answer).toMatchObject({ status: 200, json: { outcome: 'processed' } })
      expect(notes).toEqual(['Café 東京 🎉'])
    },
  )

  it('after koa-bodyparser, bytes that are not UTF-8 fail closed: 401, never a 2xx', async () => {
    const onConversion = vi.fn()
    const app = new KoaApp()
    app.use(bodyParser())
    app.use(affiliateWebhook({ path: '/hooks', secret: SECRET, onConversion, logger: false }))
    const url = await start(app)
    const event = buildConversionEvent()
    // Valid JSON around one byte that is no UTF-8: the parser's text has U+FFFD there.
    const text = JSON.stringify({ ...event, data: { ...event.data, note: 'X' } })
    const bytes = Buffer.from(text)
    bytes[bytes.indexOf('"X"') + 1] = 0xff
    const answer = await postBytes(url, bytes, 'application/json')
    expect(answer).toMatchObject({ status: 401, json: { error: { code: 'signature_mismatch' } } })
    expect(onConversion).not.toHaveBeenCalled()
  })

  it('after koa-bodyparser skipped the request (not its type), reads the stream itself', async () => {
    const onConversion = vi.fn()
    const app = new KoaApp()
    app.use(bodyParser())
    app.use(affiliateWebhook({ path: '/hooks', secret: SECRET, onConversion }))
    const url = await start(app)
    const answer = await postBytes(
      url,
      Buffer.from(JSON.stringify(buildConversionEvent())),
      'application/octet-stream',
    )
    expect(answer.status).toBe(200)
    expect(onConversion).toHaveBeenCalledTimes(1)
  })

  it('after a parser that kept no raw body: 500 raw_body_unavailable naming the fix, one line per delivery: status, code, event id and the fix', async () => {
    const onConversion = vi.fn()
    const error = vi.fn()
    const app = new KoaApp()
    app.use(parserWithoutRawBody)
    app.use(
      affiliateWebhook({
        path: '/hooks',
        secret: SECRET,
        onConversion,
        logger: { warn: () => {}, error },
      }),
    )
    const url = await start(app)
    for (let i = 0; i < 2; i++) {
      const answer = await send(url, buildConversionEvent())
      expect(answer).toMatchObject({
        status: 500,
        json: { error: { code: 'raw_body_unavailable' } },
      })
      expect(answer.json.error?.message).toMatch(/before app\.use\(bodyParser\(\)\)/)
    }
    expect(onConversion).not.toHaveBeenCalled()
    expect(error).toHaveBeenCalledTimes(2)
    expect(error.mock.calls[0]?.[0]).toMatch(
      /^affiliate-webhooks: 500 raw_body_unavailable evt_\w+ \(unverified id, attempt 1\): .*before app\.use\(bodyParser\(\)\)/,
    )
    expect(error.mock.calls[0]?.[0]).not.toContain(SECRET)
  })

  it('with path, hands other paths to the next middleware untouched', async () => {
    const app = new KoaApp()
    app.use(affiliateWebhook({ path: '/hooks', secret: SECRET, onConversion: () => {} }))
    app.use((ctx) => {
      ctx.body = `next saw ${ctx.path}`
    })
    const url = new URL('/elsewhere', await start(app))
    const response = await fetch(url, { method: 'POST', body: '{}' })
    expect(response.status).toBe(200)
    expect(await response.text()).toBe('next saw /elsewhere')
  })

  it('answers with Koa: JSON content type kept, status and Allow set through ctx', async () => {
    const app = new KoaApp()
    app.use(affiliateWebhook({ secret: SECRET, onConversion: () => {} }))
    const url = new URL('/anything', await start(app)).href
    const answer = await send(url, buildConversionEvent(), { method: 'GET' })
    expect(answer.status).toBe(405)
    expect(answer.headers.get('allow')).toBe('POST')
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8')
  })
})

import { buildConversionEvent } from '@affiliate-webhooks/core/testing'
import {
  createApp,
  createRouter,
  defineEventHandler,
  type EventHandler,
  readBody,
  toNodeListener,
  toWebRequest,
} from 'h3'
import { H3, type Middleware, readBody as readBodyV2 } from 'h3v2'
import { toNodeHandler } from 'h3v2/node'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Running } from '../../../test/support/conformance-adapters.js'
import { serve } from '../../../test/support/conformance-adapters.js'
import { SECRET, send } from '../../../test/support/conformance-cases.js'
import { affiliateWebhook } from './index.js'

const running: Running[] = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.close()))
})

/** An h3 app with `middleware` in front of the webhook at /hooks, as a Nitro server would run it. */
async function start(middleware: EventHandler | undefined, logger: { error: () => void }) {
  const onConversion = vi.fn()
  const app = createApp()
  if (middleware) app.use(middleware)
  app.use(
    createRouter().use(
      '/hooks',
      affiliateWebhook({ secret: SECRET, onConversion, logger: { warn() {}, ...logger } }),
    ),
  )
  const server = await serve(toNodeListener(app))
  running.push(server)
  return { url: server.url, onConversion }
}

describe('@affiliate-webhooks/h3', () => {
  it('verifies the bytes h3 kept when a middleware called readBody(event) first', async () => {
    const seen: unknown[] = []
    const { url, onConversion } = await start(
      defineEventHandler(async (event) => {
        seen.push(await readBody(event))
      }),
      { error: vi.fn() },
    )
    const event = buildConversionEvent()
    expect(await send(url, event)).toMatchObject({ status: 200, json: { outcome: 'processed' } })
    expect(onConversion).toHaveBeenCalledTimes(1)
    expect(seen).toEqual([event])
  })

  it('keeps the bytes it read for a readBody(event) after it', async () => {
    const after: unknown[] = []
    const app = createApp()
    const webhook = affiliateWebhook({ secret: SECRET, onConversion: () => {}, logger: false })
    app.use(
      '/hooks',
      defineEventHandler(async (event) => {
        const answer = await webhook(event)
        after.push(await readBody(event))
        return answer
      }),
    )
    const server = await serve(toNodeListener(app))
    running.push(server)
    const event = buildConversionEvent()
    expect((await send(server.url, event)).json.outcome).toBe('processed')
    expect(after).toEqual([event])
  })

  it('answers 500 raw_body_unavailable within 5 s, naming the h3 fix, after a middleware read toWebRequest(event).json()', async () => {
    const error = vi.fn()
    const { url, onConversion } = await start(
      defineEventHandler(async (event) => {
        if (event.method === 'POST') await toWebRequest(event).json()
      }),
      { error },
    )
    const event = buildConversionEvent()
    const started = performance.now()
    const answer = await send(url, event)
    expect(performance.now() - started).toBeLessThan(5_000)
    expect(answer).toMatchObject({
      status: 500,
      json: { error: { code: 'raw_body_unavailable', adapter: 'h3' } },
    })
    expect(answer.json.error?.message).toMatch(/readRawBody/)
    expect(onConversion).not.toHaveBeenCalled()
    expect(error).toHaveBeenCalledTimes(1)
    expect(String(error.mock.calls[0]?.[0])).toMatch(
      new RegExp(
        `^affiliate-webhooks: 500 raw_body_unavailable ${event.id} \\(unverified id, attempt 1\\): .*readBody\\(event\\)`,
      ),
    )
  })

  it('answers 500 raw_body_unavailable, never a hang, when a middleware holds the stream unread', async () => {
    const error = vi.fn()
    const { url } = await start(
      defineEventHandler((event) => {
        // Starts a Web stream over the request and never reads it to the end.
        if (event.method === 'POST') void toWebRequest(event).body?.getReader().read()
      }),
      { error },
    )
    const started = performance.now()
    const answer = await send(url, buildConversionEvent())
    expect(performance.now() - started).toBeLessThan(5_000)
    expect(answer).toMatchObject({ status: 500, json: { error: { code: 'raw_body_unavailable' } } })
    expect(String(error.mock.calls[0]?.[0])).toMatch(/500 raw_body_unavailable .*h3|readBody/)
  })
})

/** An h3 2 app (Nitro 3's runtime) with `middleware` in front of `app.all('/hooks', ...)`. */
async function startV2(middleware: Middleware | undefined, logger: { error: () => void }) {
  const onConversion = vi.fn()
  const app = new H3()
  if (middleware) app.use(middleware)
  app.all(
    '/hooks',
    affiliateWebhook({ secret: SECRET, onConversion, logger: { warn() {}, ...logger } }),
  )
  const server = await serve(toNodeHandler(app))
  running.push(server)
  return { url: server.url, onConversion }
}

describe('@affiliate-webhooks/h3 on h3 2', () => {
  it('verifies a delivery, then answers its resend as a duplicate', async () => {
    const { url, onConversion } = await startV2(undefined, { error: vi.fn() })
    const event = buildConversionEvent()
    expect(await send(url, event)).toMatchObject({ status: 200, json: { outcome: 'processed' } })
    expect(await send(url, event)).toMatchObject({ status: 200, json: { outcome: 'duplicate' } })
    expect(onConversion).toHaveBeenCalledTimes(1)
  })

  it('leaves the webhook working when a middleware read a clone (the h3 2 fix)', async () => {
    const seen: unknown[] = []
    const { url, onConversion } = await startV2(
      async (event) => {
        if (event.req.method === 'POST') seen.push(await event.req.clone().json())
      },
      { error: vi.fn() },
    )
    const event = buildConversionEvent()
    expect(await send(url, event)).toMatchObject({ status: 200, json: { outcome: 'processed' } })
    expect(onConversion).toHaveBeenCalledTimes(1)
    expect(seen).toEqual([event])
  })

  it('answers 500 raw_body_unavailable within 5 s, naming the h3 2 fix, after a middleware called readBody(event)', async () => {
    const error = vi.fn()
    const { url, onConversion } = await startV2(
      async (event) => {
        if (event.req.method === 'POST') await readBodyV2(event)
      },
      { error },
    )
    const event = buildConversionEvent()
    const started = performance.now()
    const answer = await send(url, event)
    expect(performance.now() - started).toBeLessThan(5_000)
    expect(answer).toMatchObject({
      status: 500,
      json: { error: { code: 'raw_body_unavailable', adapter: 'h3' } },
    })
    expect(answer.json.error?.message).toMatch(/h3 2 .*event\.req\.clone\(\)/)
    expect(onConversion).not.toHaveBeenCalled()
    expect(error).toHaveBeenCalledTimes(1)
    expect(String(error.mock.calls[0]?.[0])).toMatch(
      new RegExp(
        `^affiliate-webhooks: 500 raw_body_unavailable ${event.id} \\(unverified id, attempt 1\\): .*event\\.req\\.clone\\(\\)`,
      ),
    )
  })

  it('answers 500 raw_body_unavailable, never a hang, when a middleware holds event.req.body unread', async () => {
    const error = vi.fn()
    const { url } = await startV2(
      (event) => {
        if (event.req.method === 'POST') void event.req.body?.getReader().read()
      },
      { error },
    )
    const started = performance.now()
    const answer = await send(url, buildConversionEvent())
    expect(performance.now() - started).toBeLessThan(5_000)
    expect(answer).toMatchObject({ status: 500, json: { error: { code: 'raw_body_unavailable' } } })
    expect(String(error.mock.calls[0]?.[0])).toMatch(/event\.req\.clone\(\)/)
  })
})

/**
 * Recipe 1 of the README's NestJS section: the Express adapter in a controller
 * with `rawBody: true`. (Recipe 2, app.use in main.ts, runs the whole conformance
 * list in conformance-frameworks.test.ts.)
 */
import type { ReceiverOptions } from '@affiliate-webhooks/core'
import { buildConversionEvent } from '@affiliate-webhooks/core/testing'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Running } from '../support/conformance-adapters.js'
import { SECRET, send, streamOversize } from '../support/conformance-cases.js'
import { startNestController } from './nest-app.js'

const running: Running[] = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.close()))
})

async function start(options: Partial<ReceiverOptions>, recipe?: { rawBody?: boolean }) {
  const app = await startNestController({ secret: SECRET, ...options }, recipe)
  running.push(app)
  return app.url
}

describe('NestJS 11 controller with rawBody: true', () => {
  it('verifies the req.rawBody Nest kept, multi-byte UTF-8 intact, and answers a repeat duplicate', async () => {
    const notes: unknown[] = []
    const url = await start({
      onConversion: (_conversion, event) => {
        notes.push((event.data as { note?: unknown }).note)
      },
    })
    const base = buildConversionEvent()
    const event = { ...base, data: { ...base.data, note: 'Café 東京 🎉' } }
    expect(await send(url, event)).toMatchObject({ status: 200, json: { outcome: 'processed' } })
    expect(await send(url, event, { attempt: 2 })).toMatchObject({
      status: 200,
      json: { outcome: 'duplicate' },
    })
    expect(notes).toEqual(['Café 東京 🎉'])
  })

  it('refuses a body changed after signing with 401, and other methods with 405', async () => {
    const url = await start({ onConversion: () => {}, logger: false })
    const event = buildConversionEvent({ conversion: { commission: '0.00' } })
    expect(
      await send(url, event, { tamper: (body) => body.replace('"0.00"', '"8.00"') }),
    ).toMatchObject({ status: 401, json: { error: { code: 'signature_mismatch' } } })
    const get = await send(url, event, { method: 'GET' })
    expect(get).toMatchObject({ status: 405, json: { error: { code: 'method_not_allowed' } } })
  })

  it('without rawBody: true, answers 500 raw_body_unavailable naming the Nest fix, one line per delivery with its event id', async () => {
    const error = vi.fn()
    const onConversion = vi.fn()
    const url = await start({ onConversion, logger: { warn: () => {}, error } }, { rawBody: false })
    for (let attempt = 1; attempt <= 2; attempt++) {
      const answer = await send(url, buildConversionEvent(), { attempt })
      expect(answer).toMatchObject({
        status: 500,
        json: { error: { code: 'raw_body_unavailable' } },
      })
      expect(answer.json.error?.message).toContain(
        'NestFactory.create(AppModule, { rawBody: true })',
      )
    }
    expect(onConversion).not.toHaveBeenCalled()
    expect(error).toHaveBeenCalledTimes(2)
    expect(error.mock.calls[1]?.[0]).toMatch(
      /^affiliate-webhooks: 500 raw_body_unavailable evt_\w+ \(unverified id, attempt 2\): .*rawBody: true/,
    )
  })

  it('a declared oversize body gets the receiver 413 payload_too_large from the kept bytes', async () => {
    const onConversion = vi.fn()
    const url = await start({ onConversion, maxBodyBytes: 4096 })
    const event = buildConversionEvent()
    const answer = await send(url, { ...event, data: { ...event.data, pad: 'x'.repeat(8000) } })
    expect(answer).toMatchObject({ status: 413, json: { error: { code: 'payload_too_large' } } })
    expect(onConversion).not.toHaveBeenCalled()
  })

  it("a streamed body past Nest's JSON limit (100 kb) gets Nest's own 413, without the receiver's code", async () => {
    const onConversion = vi.fn()
    const url = await start({ onConversion, maxBodyBytes: 64 * 1024 })
    const { status, code } = await streamOversize(url, 200)
    // Nest's parser refuses it at its own limit before the adapter runs, with its own
    // body: why the README's recipe 2 exists.
    expect(status).toBe(413)
    expect(code).toBeUndefined()
    expect(onConversion).not.toHaveBeenCalled()
  })
})

/**
 * The Netlify and Vercel functions of examples/functions with the example's own
 * `src/webhook.ts`, nothing mocked: the secret comes from
 * `AFFILIATE_WEBHOOK_SECRET`, read on the first request, and the example's
 * handler stores the conversion. Each function file is served as those
 * platforms' Node runtimes serve it (a real HTTP server turning each request
 * into a Web Request and writing the Response back). Each test imports the
 * example afresh, so the options it reads on its first request are that test's.
 */
import type { Conversion } from '@affiliate-webhooks/core'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { PATH, type Running, serve, webToNode } from '../support/conformance-adapters.js'

const SECRET = 'whsec_functions_example_7c1e'
type Fn = (request: Request) => Promise<Response>

/** A fresh copy of the example: its function files and the map its handler writes. */
async function freshExample() {
  vi.resetModules()
  const [vercel, netlify, webhook] = await Promise.all([
    import('../../examples/functions/api/hooks.js'),
    import('../../examples/functions/netlify/functions/hooks.js'),
    import('../../examples/functions/src/webhook.js'),
  ])
  return {
    netlify: (() => netlify.default) as (method: string) => Fn | undefined,
    vercel: ((method: string) => (method === 'POST' ? vercel.POST : undefined)) as (
      method: string,
    ) => Fn | undefined,
    conversions: webhook.conversions as Map<number, Conversion>,
  }
}

const running: Running[] = []
afterEach(async () => {
  vi.unstubAllEnvs()
  thrown.length = 0
  await Promise.all(running.splice(0).map((server) => server.close()))
})

/** What a function threw: the platforms log it and answer 500. */
const thrown: Error[] = []

/**
 * Serves one function file on PATH as the platform does: 405 for a method it has
 * no export for, 500 (and the error in its log) when the function throws.
 */
async function platform(route: (method: string) => Fn | undefined): Promise<string> {
  const server = await serve(
    webToNode(async (request) => {
      if (new URL(request.url).pathname !== PATH) return new Response(null, { status: 404 })
      const fn = route(request.method)
      if (!fn) return new Response(null, { status: 405, headers: { allow: 'POST' } })
      try {
        return await fn(request)
      } catch (error) {
        thrown.push(error as Error)
        return new Response('{"error":"function crashed"}', { status: 500 })
      }
    }),
  )
  running.push(server)
  return server.url
}

async function post(url: string, body: string, headers: Record<string, string>) {
  const response = await fetch(url, { method: 'POST', body, headers })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

for (const name of ['netlify', 'vercel'] as const) {
  describe(`${name} function with the example's own webhook`, () => {
    it('verifies with AFFILIATE_WEBHOOK_SECRET, runs its handler once, and refuses a tampered body', async () => {
      vi.stubEnv('AFFILIATE_WEBHOOK_SECRET', SECRET)
      const example = await freshExample()
      const url = await platform(example[name])
      const event = buildConversionEvent({ conversion: { id: 4242, saleAmount: '80.00' } })
      const signed = await signedDelivery({ secret: SECRET, event })

      expect(await post(url, signed.body, signed.headers)).toEqual({
        status: 200,
        body: { received: true, outcome: 'processed' },
      })
      expect(example.conversions.get(4242)).toMatchObject({ id: 4242, saleAmount: '80.00' })

      example.conversions.clear()
      const again = await post(url, signed.body, signed.headers)
      expect(again).toMatchObject({ status: 200, body: { outcome: 'duplicate' } })
      expect(example.conversions.size).toBe(0)

      const tampered = signed.body.replace('80.00', '8000.00')
      const refused = await post(url, tampered, signed.headers)
      expect(refused).toMatchObject({
        status: 401,
        body: { error: { code: 'signature_mismatch' } },
      })
      expect(example.conversions.size).toBe(0)
    })

    it('imports without AFFILIATE_WEBHOOK_SECRET (a build needs none), then fails each delivery with an error naming it', async () => {
      vi.stubEnv('AFFILIATE_WEBHOOK_SECRET', undefined)
      const example = await freshExample()
      const url = await platform(example[name])
      const signed = await signedDelivery({ secret: SECRET, event: buildConversionEvent() })
      // Not a 2xx: the service retries it once the secret is set.
      expect((await post(url, signed.body, signed.headers)).status).toBe(500)
      expect(thrown.map((error) => error.message)).toEqual([
        expect.stringMatching(
          /`secret` must be a non-empty string.*Is AFFILIATE_WEBHOOK_SECRET set\?/,
        ),
      ])
      expect(example.conversions.size).toBe(0)
    })
  })
}

describe('the platforms route by method', () => {
  it('Vercel answers a GET 405 itself (no GET export); Netlify hands it to the webhook, which refuses it', async () => {
    vi.stubEnv('AFFILIATE_WEBHOOK_SECRET', SECRET)
    const example = await freshExample()
    const vercel = await fetch(await platform(example.vercel))
    expect(vercel.status).toBe(405)
    const netlify = await fetch(await platform(example.netlify))
    expect(netlify.status).toBe(405)
    expect(await netlify.json()).toMatchObject({ error: { code: 'method_not_allowed' } })
  })
})

import { memoryStore } from '@affiliate-webhooks/core'
import { buildConversionEvent, signPayload } from '@affiliate-webhooks/core/testing'
import type {
  APIGatewayProxyHandler,
  APIGatewayProxyHandlerV2,
  LambdaFunctionURLHandler,
} from 'aws-lambda'
import { afterEach, describe, expect, expectTypeOf, it, vi } from 'vitest'
import { fixtureEvent, type Integration } from '../../../test/adapters/conformance-serverless.js'
import { SECRET } from '../../../test/support/conformance-cases.js'
import { affiliateWebhook, type LambdaHttpEvent, type LambdaWebhookHandler } from './index.js'

afterEach(() => {
  vi.unstubAllEnvs()
})

const INTEGRATIONS = ['rest', 'http-api', 'function-url'] as const

interface Delivery {
  /** The exact bytes the service signed and sent. */
  bytes: Uint8Array
  /** How the integration put them in the event. */
  base64: boolean
  /** Header names as the integration delivers them. */
  names?: (name: string) => string
  method?: string
}

/**
 * A committed fixture event carrying one signed delivery: the fixture's own
 * signature headers and body replaced, its gateway headers (X-Forwarded-*,
 * CloudFront-*, trace ids) kept.
 */
async function eventFor(integration: Integration, delivery: Delivery): Promise<LambdaHttpEvent> {
  const names = delivery.names ?? ((name: string) => name)
  const signature = await signPayload({ secret: SECRET, payload: delivery.bytes })
  const sent = {
    [names('content-type')]: 'application/json',
    [names('service-signature')]: signature,
    [names('service-delivery-attempt')]: '1',
  }
  const event = fixtureEvent(integration)
  const fromGateway = (record: unknown) =>
    Object.fromEntries(
      Object.entries(record as Record<string, unknown>).filter(
        ([name]) => !/^(service-|content-)/i.test(name),
      ),
    )
  event.headers = { ...fromGateway(event.headers), ...sent }
  if (integration === 'rest') {
    event.multiValueHeaders = {
      ...fromGateway(event.multiValueHeaders),
      ...Object.fromEntries(Object.entries(sent).map(([name, value]) => [name, [value]])),
    }
    if (delivery.method) {
      event.httpMethod = delivery.method
      ;(event.requestContext as { httpMethod: string }).httpMethod = delivery.method
    }
  } else if (delivery.method) {
    ;(event.requestContext as { http: { method: string } }).http.method = delivery.method
  }
  const bytes = Buffer.from(delivery.bytes)
  event.body = delivery.base64 ? bytes.toString('base64') : bytes.toString('utf8')
  event.isBase64Encoded = delivery.base64
  return event as unknown as LambdaHttpEvent
}

const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value))
const titleCase = (name: string) =>
  name.replace(/(^|-)([a-z])/g, (_, dash: string, letter: string) => dash + letter.toUpperCase())
const code = (body: string) => (JSON.parse(body) as { error?: { code?: string } }).error?.code

describe('@affiliate-webhooks/lambda', () => {
  it('its handler type fits the handler types of @types/aws-lambda for all three', () => {
    expectTypeOf<LambdaWebhookHandler>().toExtend<APIGatewayProxyHandler>()
    expectTypeOf<LambdaWebhookHandler>().toExtend<APIGatewayProxyHandlerV2>()
    expectTypeOf<LambdaWebhookHandler>().toExtend<LambdaFunctionURLHandler>()
  })

  it.each(INTEGRATIONS)(
    '%s: the committed fixture is refused 401 signature_mismatch (its signature is made up)',
    async (integration) => {
      const handler = affiliateWebhook({ secret: SECRET, onConversion: () => {}, logger: false })
      const result = await handler(fixtureEvent(integration) as unknown as LambdaHttpEvent)
      expect(result.statusCode).toBe(401)
      expect(code(result.body)).toBe('signature_mismatch')
    },
  )

  it.each(INTEGRATIONS)(
    '%s: decodes a base64 body to the exact bytes, and a text body to its UTF-8 bytes',
    async (integration) => {
      const notes: unknown[] = []
      const handler = affiliateWebhook({
        secret: SECRET,
        logger: false,
        onConversion: (_conversion, event) => {
          notes.push((event.data as { note?: unknown }).note)
        },
      })
      for (const base64 of [true, false]) {
        const event = buildConversionEvent()
        const bytes = json({ ...event, data: { ...event.data, note: 'Café 東京 🎉' } })
        const result = await handler(await eventFor(integration, { bytes, base64 }))
        expect(result.statusCode).toBe(200)
      }
      expect(notes).toEqual(['Café 東京 🎉', 'Café 東京 🎉'])
    },
  )

  it.each(INTEGRATIONS)(
    '%s: verifies base64 bytes that are not UTF-8 as they are (400 malformed_json, not 401)',
    async (integration) => {
      const handler = affiliateWebhook({ secret: SECRET, onConversion: () => {}, logger: false })
      // 0xff is no UTF-8: any text round trip would change it and break the signature.
      const bytes = new Uint8Array([0x7b, 0xff, 0xfe, 0x7d])
      const result = await handler(await eventFor(integration, { bytes, base64: true }))
      expect(result.statusCode).toBe(400)
      expect(code(result.body)).toBe('malformed_json')
    },
  )

  it('rest: reads mixed-case names, from multiValueHeaders or, without them, from headers', async () => {
    const handler = affiliateWebhook({ secret: SECRET, onConversion: () => {}, logger: false })
    const delivery = { bytes: json(buildConversionEvent()), base64: false, names: titleCase }
    const event = (await eventFor('rest', delivery)) as { headers: Record<string, string> }
    expect(Object.keys(event.headers)).toContain('Service-Signature')
    expect((await handler(event as unknown as LambdaHttpEvent)).statusCode).toBe(200)

    const onlyHeaders = await eventFor('rest', {
      bytes: json(buildConversionEvent()),
      base64: false,
      names: (name) => name.toUpperCase(),
    })
    delete (onlyHeaders as { multiValueHeaders?: unknown }).multiValueHeaders
    expect((await handler(onlyHeaders)).statusCode).toBe(200)
  })

  it('rest: prefers multiValueHeaders, where every value of a repeated header is kept', async () => {
    const handler = affiliateWebhook({ secret: SECRET, onConversion: () => {}, logger: false })
    const event = (await eventFor('rest', {
      bytes: json(buildConversionEvent()),
      base64: false,
    })) as { headers: Record<string, string> }
    // `headers` holds only the last of a repeated header; the signature is in multiValueHeaders.
    event.headers['service-signature'] = 't=1,v1=00'
    expect((await handler(event as unknown as LambdaHttpEvent)).statusCode).toBe(200)
  })

  it.each(['http-api', 'function-url'] as const)(
    '%s: reads the lower-case names of the 2.0 payload',
    async (integration) => {
      const handler = affiliateWebhook({ secret: SECRET, onConversion: () => {}, logger: false })
      const event = (await eventFor(integration, {
        bytes: json(buildConversionEvent()),
        base64: false,
      })) as { headers: Record<string, string> }
      expect(Object.keys(event.headers).every((name) => name === name.toLowerCase())).toBe(true)
      expect((await handler(event as unknown as LambdaHttpEvent)).statusCode).toBe(200)
    },
  )

  it.each(INTEGRATIONS)(
    '%s: answers statusCode, headers, body, isBase64Encoded false and nothing else',
    async (integration) => {
      const handler = affiliateWebhook({ secret: SECRET, onConversion: () => {}, logger: false })
      const event = await eventFor(integration, {
        bytes: json(buildConversionEvent()),
        base64: false,
      })
      const ok = await handler(event)
      expect(ok).toEqual({
        statusCode: 200,
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify({ received: true, outcome: 'processed' }),
        isBase64Encoded: false,
      })
      const get = await eventFor(integration, {
        bytes: new Uint8Array(),
        base64: false,
        method: 'GET',
      })
      const refused = await handler(get)
      expect(Object.keys(refused).sort()).toEqual([
        'body',
        'headers',
        'isBase64Encoded',
        'statusCode',
      ])
      expect(refused).toMatchObject({
        statusCode: 405,
        headers: { allow: 'POST' },
        isBase64Encoded: false,
      })
      expect(code(refused.body)).toBe('method_not_allowed')
    },
  )

  it('answers without hop-by-hop headers: the gateway owns the connection', async () => {
    const handler = affiliateWebhook({
      secret: SECRET,
      onConversion: () => {},
      logger: false,
      maxBodyBytes: 16,
    })
    const event = buildConversionEvent()
    const result = await handler(
      await eventFor('function-url', { bytes: json(event), base64: false }),
    )
    expect(result.statusCode).toBe(413)
    expect(Object.keys(result.headers ?? {}).map((name) => name.toLowerCase())).not.toContain(
      'connection',
    )
  })

  it('applies maxBodyBytes to the decoded size, not to the base64 text', async () => {
    const handler = affiliateWebhook({
      secret: SECRET,
      onConversion: () => {},
      logger: false,
      maxBodyBytes: 400,
    })
    const event = buildConversionEvent()
    const fits = json({
      ...event,
      data: { ...event.data, pad: 'x'.repeat(400 - json(event).length - 9) },
    })
    expect(fits.byteLength).toBeLessThanOrEqual(400)
    // Its base64 text is a third longer than the limit; the bytes are within it.
    const inside = await handler(await eventFor('function-url', { bytes: fits, base64: true }))
    expect(inside.statusCode).toBe(200)

    const over = new Uint8Array(401).fill(0x20)
    for (const base64 of [true, false]) {
      const result = await handler(await eventFor('rest', { bytes: over, base64 }))
      expect(result.statusCode).toBe(413)
      expect(code(result.body)).toBe('payload_too_large')
    }
  })

  it('answers 500 raw_body_unavailable to a hand-made event whose body is an object, one line per delivery: status, code, event id and the fix', async () => {
    const error = vi.fn()
    const handler = affiliateWebhook({
      secret: SECRET,
      onConversion: () => {},
      logger: { warn: () => {}, error },
    })
    const event = await eventFor('http-api', { bytes: json(buildConversionEvent()), base64: false })
    const parsed = { ...event, body: JSON.parse((event as { body: string }).body) }
    for (let i = 0; i < 2; i++) {
      const result = await handler(parsed as unknown as LambdaHttpEvent)
      expect(result.statusCode).toBe(500)
      expect(code(result.body)).toBe('raw_body_unavailable')
    }
    expect(error).toHaveBeenCalledTimes(2)
    expect(error.mock.calls[0]?.[0]).toMatch(
      /^affiliate-webhooks: 500 raw_body_unavailable .*: .*integration event untouched/,
    )
    expect(error.mock.calls[0]?.[0]).not.toContain(SECRET)
  })

  it('inside Lambda, warns once that the default memory store cannot dedupe across instances', async () => {
    vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', 'affiliate-webhooks-receiver')
    const warn = vi.fn()
    const logger = { warn, error: () => {} }
    // A module loaded again in the same environment (two handlers, one logger): still once.
    const handler = affiliateWebhook({ secret: SECRET, onConversion: () => {}, logger })
    affiliateWebhook({ secret: SECRET, onConversion: () => {}, logger })
    expect(warn).toHaveBeenCalledTimes(1)
    expect(warn.mock.calls[0]?.[0]).toMatch(
      /^@affiliate-webhooks\/lambda: the memory store lives in one AWS Lambda execution environment.*redisStore/,
    )
    // It still answers; the warning is about retries reaching another instance.
    const event = await eventFor('function-url', {
      bytes: json(buildConversionEvent()),
      base64: false,
    })
    expect((await handler(event)).statusCode).toBe(200)
    expect(warn).toHaveBeenCalledTimes(1)

    const quiet = vi.fn()
    affiliateWebhook({
      secret: SECRET,
      onConversion: () => {},
      store: memoryStore(),
      logger: { warn: quiet, error: () => {} },
    })
    expect(quiet).not.toHaveBeenCalled()
  })

  it('outside Lambda, says nothing about the memory store', () => {
    vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', '')
    const warn = vi.fn()
    affiliateWebhook({ secret: SECRET, onConversion: () => {}, logger: { warn, error: () => {} } })
    expect(warn).not.toHaveBeenCalled()
  })
})

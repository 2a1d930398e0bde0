import { afterEach, describe, expect, it, vi } from 'vitest'
import { WebhookError } from '../errors.js'
import { memoryStore } from '../store/memory-store.js'
import { buildConversionEvent, signedDelivery } from '../testing/index.js'
import { BoundedBody, createAdapter, keptBody } from './adapter.js'

const SECRET = 'whsec_adapter_factory'

interface FakeRequest {
  method: string
  headers: Record<string, string>
  body: () => Uint8Array
}

function adapterFor(options: Parameters<typeof createAdapter>[0]) {
  return createAdapter<FakeRequest, unknown, unknown>(options, {
    name: '@affiliate-webhooks/fake',
    method: (request) => request.method,
    headers: (request) => request.headers,
    body: (request) => request.body(),
  })
}

async function signed(): Promise<FakeRequest> {
  const { headers, body } = await signedDelivery({ secret: SECRET, event: buildConversionEvent() })
  return { method: 'POST', headers, body: () => new TextEncoder().encode(body) }
}

afterEach(() => {
  vi.unstubAllEnvs()
})

describe('createAdapter', () => {
  it('receives a POST, answers other methods 405 without reading the body', async () => {
    const onConversion = vi.fn()
    const adapter = adapterFor({ secret: SECRET, onConversion, logger: false })
    expect((await adapter.handle(await signed()))?.outcome).toBe('processed')
    const body = vi.fn(() => new Uint8Array(0))
    const result = await adapter.handle({ method: 'GET', headers: {}, body })
    expect(result?.status).toBe(405)
    expect(body).not.toHaveBeenCalled()
    expect(onConversion).toHaveBeenCalledTimes(1)
  })

  it('answers a reader WebhookError with its code, logs each one with the claimed event id, and gives no answer when the client went away', async () => {
    const error = vi.fn()
    const adapter = adapterFor({
      secret: SECRET,
      onConversion: () => {},
      logger: { warn() {}, error },
    })
    const unavailable = {
      method: 'POST',
      headers: { 'service-event-id': 'evt_claimed', 'service-delivery-attempt': '2' },
      body: () => {
        throw new WebhookError('raw_body_unavailable', 'Keep the bytes.')
      },
    }
    for (let i = 0; i < 3; i++) {
      expect(await adapter.handle(unavailable)).toMatchObject({
        status: 500,
        error: { code: 'raw_body_unavailable' },
      })
    }
    expect(error.mock.calls.map(([line]) => line)).toEqual(
      Array(3).fill(
        'affiliate-webhooks: 500 raw_body_unavailable evt_claimed (unverified id, attempt 2): Keep the bytes.',
      ),
    )
    const gone = {
      method: 'POST',
      headers: {},
      body: () => {
        throw new Error('socket hang up')
      },
    }
    expect(await adapter.handle(gone)).toBeUndefined()
  })

  it('throws a bad secret at once for options, on first use for a function of env', () => {
    expect(() => adapterFor({ secret: 'nope', onConversion: () => {} })).toThrow(TypeError)
    const options = vi.fn((env: unknown) => ({
      secret: (env as { SECRET: string }).SECRET,
      onConversion: () => {},
    }))
    const adapter = adapterFor(options)
    expect(options).not.toHaveBeenCalled()
    expect(adapter.receiver({ SECRET }).maxBodyBytes).toBeGreaterThan(0)
    adapter.receiver({ SECRET: 'other' })
    expect(options).toHaveBeenCalledTimes(1)
  })

  it('warns once inside Lambda when the memory store is the default, not with a store given', () => {
    vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', 'hooks')
    const warn = vi.fn()
    const logger = { warn, error() {} }
    adapterFor({ secret: SECRET, onConversion: () => {}, logger })
    adapterFor({ secret: SECRET, onConversion: () => {}, logger })
    adapterFor({
      secret: SECRET,
      onConversion: () => {},
      logger: { warn, error() {} },
      store: memoryStore(),
    })
    // With a queue, dedupe is the job id's: no warning either.
    adapterFor({
      secret: SECRET,
      logger: { warn, error() {} },
      queue: { enqueue: async () => {} },
    } as never)
    expect(warn).toHaveBeenCalledTimes(1)
    expect(warn.mock.calls[0]?.[0]).toMatch(/AWS Lambda execution environment.*redisStore/)
    vi.unstubAllEnvs()
    const quiet = vi.fn()
    adapterFor({ secret: SECRET, onConversion: () => {}, logger: { warn: quiet, error() {} } })
    expect(quiet).not.toHaveBeenCalled()
  })
})

describe('keptBody', () => {
  const bytes = new TextEncoder().encode('{"a":"é"}')
  it('takes rawBody bytes, a UTF-8 rawBody string, or a body that is still bytes', () => {
    expect(keptBody({ rawBody: bytes }, 100)).toBe(bytes)
    expect(keptBody({ rawBody: '{"a":"é"}' }, 100)).toEqual(bytes)
    expect(keptBody({ body: bytes }, 100)).toBe(bytes)
    expect(keptBody({ body: { a: 'é' } }, 100)).toBeUndefined()
  })
  it('refuses kept bytes past the limit with payload_too_large', () => {
    expect(() => keptBody({ rawBody: bytes }, 4)).toThrow(
      expect.objectContaining({ code: 'payload_too_large' }),
    )
  })
})

describe('BoundedBody', () => {
  it('joins chunks in order, keeps one chunk without a copy, and stops past the limit', () => {
    const one = new BoundedBody(10)
    const chunk = new Uint8Array([1, 2, 3])
    expect(one.add(chunk)).toBe(true)
    expect(one.bytes()).toBe(chunk)
    const many = new BoundedBody(5)
    expect(many.add(new Uint8Array([1, 2]))).toBe(true)
    expect(many.add(new Uint8Array([3, 4, 5]))).toBe(true)
    expect([...many.bytes()]).toEqual([1, 2, 3, 4, 5])
    expect(many.add(new Uint8Array([6]))).toBe(false)
  })
})

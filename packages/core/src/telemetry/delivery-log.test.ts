import { Writable } from 'node:stream'
import { pino } from 'pino'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { WebhookError } from '../errors.js'
import { createReceiver } from '../receiver/create-receiver.js'
import type { ReceiverOptions } from '../receiver/receiver-types.js'
import type { EventStore } from '../store/event-store.js'
import { buildConversionEvent, signedDelivery } from '../testing/index.js'
import { BURST_WINDOW_MS, createDeliveryLog } from './delivery-log.js'

const SECRET = 'whsec_logging_test_secret'

async function delivery(options: { secret?: string; tamper?: boolean } = {}) {
  const event = buildConversionEvent({ conversion: { id: 77, commission: '1.23' } })
  const signed = await signedDelivery({ secret: options.secret ?? SECRET, event, attempt: 3 })
  const body = options.tamper ? signed.body.replace('1.23', '9.99') : signed.body
  return { event, input: { headers: signed.headers, rawBody: new TextEncoder().encode(body) } }
}

const receiver = (options: Partial<ReceiverOptions>) =>
  createReceiver({ secret: SECRET, onConversion: () => {}, ...options })

afterEach(() => {
  vi.restoreAllMocks()
})

describe('logger: one line per delivery not acknowledged', () => {
  it('by default, a handler that throws makes exactly one console.error call: status, code, event id, the stack', async () => {
    // test/observability/logging.test.ts checks the same on a real process's stderr.
    const written: string[] = []
    vi.spyOn(console, 'error').mockImplementation((line: string) => {
      written.push(line)
    })
    const { event, input } = await delivery()
    const r = receiver({
      onConversion() {
        throw new Error('CRM timed out')
      },
    })
    expect(r.logger).toBe(console)
    const answer = await r.receive(input)
    expect(answer.status).toBe(500)
    expect(written).toHaveLength(1)
    expect(written[0]).toMatch(
      new RegExp(
        `^affiliate-webhooks: 500 handler_failed ${event.id} \\(conversion.created, attempt 3\\): handler threw Error: CRM timed out\\n\\s+at `,
      ),
    )
    expect(written[0]).not.toContain(SECRET)
    expect(written[0]).not.toContain('"commission"')
  })

  it('logs nothing with logger: false', async () => {
    const error = vi.spyOn(console, 'error').mockImplementation(() => {})
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    const { input } = await delivery()
    const answer = await receiver({
      logger: false,
      onConversion() {
        throw new Error('CRM timed out')
      },
    }).receive(input)
    expect(answer.status).toBe(500)
    expect(error).not.toHaveBeenCalled()
    expect(warn).not.toHaveBeenCalled()
  })

  it('logs nothing for an acknowledged delivery', async () => {
    const lines: string[] = []
    const log = { warn: (l: string) => lines.push(l), error: (l: string) => lines.push(l) }
    const { input } = await delivery()
    const r = receiver({ logger: log })
    expect((await r.receive(input)).status).toBe(200)
    expect((await r.receive(input)).status).toBe(200) // duplicate
    expect(lines).toEqual([])
  })

  it('store down: one error line with 503 store_unavailable and the cause, never the secret', async () => {
    const lines: [string, string][] = []
    const down: EventStore = {
      begin: () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6390')),
      commit: () => true,
      release: () => undefined,
    }
    const { event, input } = await delivery()
    await receiver({
      store: down,
      logger: { warn: (l) => lines.push(['warn', l]), error: (l) => lines.push(['error', l]) },
    }).receive(input)
    expect(lines).toEqual([
      [
        'error',
        expect.stringMatching(
          new RegExp(
            `^affiliate-webhooks: 503 store_unavailable ${event.id} .*ECONNREFUSED 127\\.0\\.0\\.1:6390`,
          ),
        ),
      ],
    ])
  })

  it('works with pino: one record at level error with the same line', async () => {
    const records: { level: number; msg: string }[] = []
    const sink = new Writable({
      write(chunk, _encoding, done) {
        records.push(JSON.parse(String(chunk)))
        done()
      },
    })
    const { event, input } = await delivery()
    await receiver({
      logger: pino(sink),
      onConversion() {
        throw new TypeError('bad row')
      },
    }).receive(input)
    expect(records).toHaveLength(1)
    expect(records[0]?.level).toBe(50)
    expect(records[0]?.msg).toMatch(
      new RegExp(`500 handler_failed ${event.id} .*TypeError: bad row\\n\\s+at `),
    )
  })

  it('a logger that throws does not change the answer', async () => {
    const { input } = await delivery({ tamper: true })
    const answer = await receiver({
      logger: {
        warn() {
          throw new Error('log full')
        },
        error() {
          throw new Error('log full')
        },
      },
    }).receive(input)
    expect(answer.status).toBe(401)
  })

  it('refuses a logger without warn and error', () => {
    expect(() => receiver({ logger: {} as never })).toThrow(
      /`logger` must have warn and error methods/,
    )
  })
})

describe('logger: bursts of unauthenticated refusals are summarised', () => {
  it('1,000 bad signatures make two lines: the first, then a count when the window ends (besides the three streak warnings)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] })
    try {
      const all: string[] = []
      const r = receiver({ logger: { warn: (l) => all.push(l), error: (l) => all.push(l) } })
      const { input } = await delivery({ secret: 'whsec_an_attacker_guess' })
      for (let i = 0; i < 1000; i++) expect((await r.receive(input)).status).toBe(401)
      // A wrong secret is also how an endpoint gets disabled, so these refusals
      // count toward the failure streak: it warns at 5, 10 and 15, then no more.
      const streak = all.filter((l) => / answers in a row were not 2xx /.test(l))
      expect(streak.map((l) => Number(/: (\d+) answers/.exec(l)?.[1]))).toEqual([5, 10, 15])
      const lines = all.filter((l) => !streak.includes(l))
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatch(
        /^affiliate-webhooks: 401 signature_mismatch evt_\w+ \(unverified id, attempt 3\)/,
      )
      await vi.advanceTimersByTimeAsync(BURST_WINDOW_MS)
      const later = all.filter((l) => !streak.includes(l))
      expect(later).toHaveLength(2)
      expect(later[1]).toBe(
        'affiliate-webhooks: 999 more deliveries refused before verification in the last 60 s (signature_mismatch x999); not logged one by one',
      )
    } finally {
      vi.useRealTimers()
    }
  })

  it('a refusal after the window logs the pending summary, then itself', () => {
    let now = 0
    const lines: string[] = []
    const log = createDeliveryLog(
      { warn: (l) => lines.push(l), error: (l) => lines.push(l) },
      () => now,
    )
    const refusal = (code: 'signature_mismatch' | 'payload_too_large') => ({
      status: code === 'signature_mismatch' ? 401 : 413,
      error: new WebhookError(code, 'no'),
    })
    const input = { headers: {}, rawBody: new Uint8Array() }
    log(refusal('signature_mismatch'), input)
    log(refusal('payload_too_large'), input)
    log(refusal('signature_mismatch'), input)
    now += BURST_WINDOW_MS
    log(refusal('signature_mismatch'), input)
    expect(lines).toEqual([
      'affiliate-webhooks: 401 signature_mismatch a delivery with no event id: no',
      'affiliate-webhooks: 2 more deliveries refused before verification in the last 60 s (payload_too_large x1, signature_mismatch x1); not logged one by one',
      'affiliate-webhooks: 401 signature_mismatch a delivery with no event id: no',
    ])
  })

  it('refusals after verification (a handler failure, bad JSON) are never summarised', () => {
    const lines: string[] = []
    const log = createDeliveryLog({ warn: (l) => lines.push(l), error: (l) => lines.push(l) })
    const input = { headers: {}, rawBody: new Uint8Array() }
    for (let i = 0; i < 5; i++)
      log({ status: 400, error: new WebhookError('malformed_json', 'x') }, input)
    expect(lines).toHaveLength(5)
  })
})

describe('secret: mistakes caught at start-up', () => {
  it.each([
    ['an empty string', '', /must be a non-empty string/],
    ['undefined (an unset variable)', undefined, /Is AFFILIATE_WEBHOOK_SECRET set\?/],
    ['a number', 42, /must be a non-empty string/],
    ['an empty array', [], /must be a non-empty string/],
    [
      'no whsec_ prefix',
      'abc123secret',
      /must start with "whsec_".*shown once, when the endpoint is registered \(POST \/v1\/webhooks\) or its secret rotated/,
    ],
    ['only the prefix', 'whsec_', /must start with "whsec_"/],
    ['a trailing newline', `${SECRET}\n`, /white space around it/],
    ['leading spaces', `  ${SECRET}`, /white space around it/],
    ['an array with one bad secret', [SECRET, 'oldsecret'], /secret\[1\] must start with "whsec_"/],
  ])('%s throws, naming the fix and never the secret', (_, secret, message) => {
    let error: unknown
    try {
      createReceiver({ secret: secret as string, onConversion: () => {} })
    } catch (thrown) {
      error = thrown
    }
    expect(error).toBeInstanceOf(TypeError)
    expect((error as Error).message).toMatch(message)
    if (typeof secret === 'string' && secret.trim().length > 6) {
      expect((error as Error).message).not.toContain(secret.trim())
    }
  })
})

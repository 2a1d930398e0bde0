import { describe, expect, it } from 'vitest'
import { isWrongRoute } from './route-probe.js'
import { RETRY_SCHEDULE_MS } from './schedule.js'
import {
  afterFailedAttempt,
  attemptOutcome,
  randomConversionId,
  sampleEventBody,
} from './send-one.js'

const parse = (body: string) =>
  JSON.parse(body) as {
    type: string
    createdAt: string
    data: { conversion?: { id: number; status: string } }
  }

describe('sampleEventBody', () => {
  it('picks the type from the status: created when absent or pending, updated otherwise', () => {
    const created = parse(sampleEventBody())
    expect(created.type).toBe('conversion.created')
    expect(created.data.conversion?.status).toBe('pending')
    expect(parse(sampleEventBody({ status: 'pending' })).type).toBe('conversion.created')
    const updated = parse(sampleEventBody({ status: 'approved', conversionId: 1001 }))
    expect(updated.type).toBe('conversion.updated')
    expect(updated.data.conversion).toMatchObject({ id: 1001, status: 'approved' })
  })

  it('gives an update with no status the status approved, and keeps a given createdAt', () => {
    const body = parse(
      sampleEventBody({ type: 'conversion.updated', createdAt: '2026-11-20T09:15:00.000Z' }),
    )
    expect(body.data.conversion?.status).toBe('approved')
    expect(body.createdAt).toBe('2026-11-20T09:15:00.000Z')
  })

  it('builds webhook.test with no conversion, and refuses one given a status or conversion id', () => {
    const test = parse(sampleEventBody({ type: 'webhook.test' }))
    expect(test.type).toBe('webhook.test')
    expect(test.data.conversion).toBeUndefined()
    expect(() => sampleEventBody({ type: 'webhook.test', status: 'approved' })).toThrow(TypeError)
    expect(() => sampleEventBody({ type: 'webhook.test', conversionId: 5 })).toThrow(TypeError)
  })
})

describe('afterFailedAttempt', () => {
  it('names the next attempt and its offset, and gives up after the last', () => {
    expect(afterFailedAttempt(1)).toBe('the service would retry, attempt 2 at +1 min')
    expect(afterFailedAttempt('2')).toBe('the service would retry, attempt 3 at +5 min')
    expect(afterFailedAttempt(RETRY_SCHEDULE_MS.length + 1)).toBe(
      'this was attempt 8 of 8: the service would mark the delivery failed',
    )
    expect(afterFailedAttempt('-')).toBe('the service would retry')
  })
})

describe('attemptOutcome', () => {
  it('says acknowledged, not acknowledged, a redirect or no answer, with the time taken', () => {
    expect(attemptOutcome({ ok: true, responseStatus: 200, durationMs: 12.4 }, 1)).toBe(
      '200 acknowledged in 12 ms',
    )
    expect(attemptOutcome({ ok: false, responseStatus: 500, durationMs: 81 }, 1)).toBe(
      '500 not acknowledged: the service would retry, attempt 2 at +1 min (answered in 81 ms)',
    )
    expect(attemptOutcome({ ok: false, responseStatus: 302, durationMs: 3 }, 1)).toMatch(
      /^302 redirect, not followed: a failure, the service would retry/,
    )
    const timeout = { ok: false, errorMessage: 'no answer within 10000 ms', durationMs: 10_000 }
    expect(attemptOutcome(timeout, 8)).toBe(
      'no answer: no answer within 10000 ms (after 10000 ms); this was attempt 8 of 8: the service would mark the delivery failed',
    )
  })
})

describe('randomConversionId', () => {
  it('gives six- to nine-digit integers that leave a 32-bit run after them', () => {
    const ids = Array.from({ length: 2000 }, randomConversionId)
    for (const id of ids) {
      expect(Number.isInteger(id)).toBe(true)
      expect(id).toBeGreaterThanOrEqual(100_000)
      expect(id + 1_000_000).toBeLessThan(2 ** 31)
    }
    expect(new Set(ids).size).toBeGreaterThan(1990)
  })
})

describe('isWrongRoute', () => {
  it('is true for 404 and 405 only', () => {
    expect([404, 405].map(isWrongRoute)).toEqual([true, true])
    expect([200, 400, 401, 410, 500, null, undefined].map(isWrongRoute)).toEqual(
      Array(7).fill(false),
    )
  })
})

import { RETRY_SCHEDULE_MS } from '@affiliate-webhooks/emulator'
import { describe, expect, it } from 'vitest'
import { afterFailedAttempt, attemptOutcome, nextAttemptIn } from './emulator-send-text.js'

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

describe('nextAttemptIn', () => {
  it('says how long until the next attempt in service time, with no clock time beside the line stamp', () => {
    expect(nextAttemptIn(1)).toBe('next attempt 2 in 1 min of service time')
    expect(nextAttemptIn(2)).toBe('next attempt 3 in 5 min of service time')
    expect(nextAttemptIn(null)).toBe('next attempt due (service time)')
  })
})

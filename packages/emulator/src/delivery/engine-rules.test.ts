import { describe, expect, it } from 'vitest'
import { isApiError } from '../shared/api-error.js'
import { createClock } from '../shared/clock.js'
import { failDelivery, pendingDelivery, settleAttempt, startReplay } from './delivery-record.js'
import {
  activeEndpoint,
  disableEndpoint,
  enableEndpoint,
  recordFailure,
  recordSuccess,
} from './endpoint-state.js'
import { MAX_ATTEMPTS, RETRY_SCHEDULE_MS } from './schedule.js'

describe('delivery record', () => {
  it('retries at the previous attempt + the offset, and fails after the eighth', () => {
    const delivery = { id: 'dlv_1', ...pendingDelivery(0) }
    let at = 0
    for (let made = 1; made < MAX_ATTEMPTS; made++) {
      delivery.made = made
      settleAttempt(delivery, false, at)
      expect(delivery.status).toBe('retrying')
      expect(delivery.nextAttemptAt).toBe(at + (RETRY_SCHEDULE_MS[made - 1] as number))
      at = delivery.nextAttemptAt as number
    }
    delivery.made = MAX_ATTEMPTS
    settleAttempt(delivery, false, at)
    expect(delivery).toMatchObject({
      status: 'failed',
      failedBecause: 'attempts_exhausted',
      nextAttemptAt: undefined,
    })
  })

  it('replays only a succeeded or failed delivery', () => {
    const delivery = { id: 'dlv_2', ...pendingDelivery(5) }
    expect(() => startReplay(delivery, 10)).toThrow(
      expect.objectContaining({ code: 'delivery_not_replayable' }),
    )
    try {
      startReplay(delivery, 10)
    } catch (error) {
      expect(isApiError(error)).toBe(true)
    }
    failDelivery(delivery, 'endpoint_disabled')
    delivery.made = 3
    startReplay(delivery, 10)
    expect(delivery).toMatchObject({
      status: 'pending',
      made: 0,
      replays: 1,
      nextAttemptAt: 10,
      failedBecause: undefined,
    })
  })
})

describe('endpoint state', () => {
  it('disables at the 20th failure in a row; a success resets the streak', () => {
    const endpoint = activeEndpoint()
    for (let i = 1; i < 20; i++) expect(recordFailure(endpoint, i)).toBe(false)
    recordSuccess(endpoint, 100)
    expect(endpoint).toMatchObject({
      consecutiveFailures: 0,
      lastDeliveryAt: 100,
      status: 'active',
    })
    for (let i = 1; i < 20; i++) recordFailure(endpoint, 200 + i)
    expect(recordFailure(endpoint, 300)).toBe(true)
    expect(endpoint).toMatchObject({ status: 'disabled', disabledAt: 300, consecutiveFailures: 20 })
    expect(recordFailure(endpoint, 301)).toBe(false)
    enableEndpoint(endpoint)
    expect(endpoint).toMatchObject({ status: 'active', consecutiveFailures: 0, disabledAt: null })
    expect(disableEndpoint(endpoint, 400)).toBe(true)
    expect(disableEndpoint(endpoint, 500)).toBe(false)
    expect(endpoint.disabledAt).toBe(400)
  })
})

describe('clock', () => {
  it('advances, never goes back, and scales real delays', () => {
    const clock = createClock({ start: 1_000_000, timeScale: 1000 })
    const before = clock.now()
    clock.advance(60_000)
    expect(clock.now() - before).toBeGreaterThanOrEqual(60_000)
    const now = clock.now()
    clock.advanceTo(now - 5_000)
    expect(clock.now()).toBeGreaterThanOrEqual(now)
    expect(clock.realDelay(clock.now() + 60_000)).toBeLessThanOrEqual(60)
    expect(clock.realDelay(0)).toBe(0)
    expect(() => createClock({ timeScale: 0 })).toThrow(/timeScale/)
  })
})

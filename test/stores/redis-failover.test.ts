/**
 * The Redis store across a real Sentinel failover (primary, replica, three
 * Sentinels started by the test), with the replication link cut while
 * deliveries go on, then the primary killed and everything delivered again.
 * With `replication`, what the docs promise: no acknowledged event handled
 * twice, no older status applied over a newer acknowledged one, deliveries
 * during the cut answered 503. The default store, run the same way, shows the
 * run can see what `replication` prevents.
 */
import type { ConversionEvent } from '@affiliate-webhooks/core'
import { afterEach, describe, expect, it } from 'vitest'
import { lifecycles, random } from '../emulator/lifecycles.js'
import { type Answer, failoverFigures, runFailoverScenario } from '../support/failover-scenario.js'
import {
  type RedisFailover,
  redisFailoverTarget,
  startRedisFailover,
} from '../support/redis-failover.js'

let failover: RedisFailover | undefined
afterEach(async () => {
  await failover?.stop()
  failover = undefined
})

describe('the Redis store across a Sentinel failover', () => {
  it('with replication: nothing acknowledged is handled twice or overtaken by an older status', async () => {
    failover = await startRedisFailover()
    const figures = await runFailoverScenario(
      redisFailoverTarget(failover, { replicas: 1, timeoutMs: 500 }),
    )
    // The cut was real: no delivery during it was acknowledged; they were
    // refused retryably (503, or 409 for a copy that met another attempt).
    expect(figures.cutDeliveries).toBeGreaterThan(0)
    expect(figures.cutAcknowledged).toBe(0)
    expect(figures.answers503).toBeGreaterThan(figures.cutDeliveries / 2)
    expect(figures.appliedAfterAcknowledged).toBe(0)
    expect(figures.olderOverNewerAcknowledged).toBe(0)
    expect(figures.acknowledgedNeverApplied).toBe(0)
    expect(figures.wrongFinalState).toBe(0)
  }, 60_000)

  it('without it, the same run finds acknowledged events handled again', async () => {
    failover = await startRedisFailover()
    const figures = await runFailoverScenario(redisFailoverTarget(failover))
    expect(figures.cutAcknowledged).toBeGreaterThan(0)
    expect(figures.appliedAfterAcknowledged).toBeGreaterThan(0)
  }, 60_000)
})

describe('failoverFigures', () => {
  const events = lifecycles(2, random(3)) as ConversionEvent[]
  const [first, second] = events.filter(
    (e) => e.data.conversion.id === events[0]?.data.conversion.id,
  ) as [ConversionEvent, ConversionEvent]
  const ack = (event: ConversionEvent, at: number): Answer => ({
    eventId: event.id,
    phase: 'cut',
    status: 200,
    startedAt: at - 1,
    endedAt: at,
  })

  it('counts one acknowledged event applied a second time', () => {
    const figures = failoverFigures(
      events,
      [ack(first, 100)],
      [`${first.id}|99`, `${first.id}|500`],
      {},
    )
    expect(figures.appliedAfterAcknowledged).toBe(1)
    expect(figures.appliedTwice).toBe(1)
  })

  it('counts an older event applied after a newer one was acknowledged', () => {
    const figures = failoverFigures(
      events,
      [ack(second, 100)],
      [`${second.id}|99`, `${first.id}|200`],
      {},
    )
    expect(figures.olderOverNewerAcknowledged).toBe(1)
    expect(figures.olderOverNewer).toBe(1)
    expect(figures.appliedAfterAcknowledged).toBe(0)
  })
})

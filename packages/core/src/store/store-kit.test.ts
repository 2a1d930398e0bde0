import { describe, expect, it } from 'vitest'
import type { FailureStreak } from './event-store.js'
import {
  atMostEvery,
  checkAcquireTimeout,
  checkoutWithin,
  gatedStreak,
  PRUNE_BATCH,
  PRUNE_ROUND_BATCHES,
  PRUNE_ROUND_BUDGET_MS,
  pruneRound,
  STREAK_RESET_EVERY_MS,
} from './store-kit.js'

describe('gatedStreak', () => {
  it('writes every failure, a 2xx after one at once, and healthy 2xx at most once a period', async () => {
    let now = 10_000
    const calls: (string | null)[] = []
    let count = 0
    const record = gatedStreak(
      async (code): Promise<FailureStreak> => {
        calls.push(code)
        count = code === null ? 0 : count + 1
        return { count, recentCodes: code === null ? [] : [code] }
      },
      () => now,
    )
    await record(null)
    await record(null)
    expect(calls).toEqual([null])
    expect((await record('timeout')).count).toBe(1)
    expect((await record('timeout')).count).toBe(2)
    await record(null) // after failures: at once, within the period
    now += 10
    await record(null)
    expect(calls).toEqual([null, 'timeout', 'timeout', null])
    now += STREAK_RESET_EVERY_MS
    await record(null)
    expect(calls).toHaveLength(5)
  })
})

describe('checkoutWithin', () => {
  it('rejects past the deadline and gives back a connection that arrives late', async () => {
    const givenBack: string[] = []
    let arrive: (value: string) => void = () => {}
    const late = checkoutWithin(
      () => new Promise<string>((resolve) => (arrive = resolve)),
      (connection) => givenBack.push(connection),
      20,
    )
    await expect(late).rejects.toThrow('no database connection within 20 ms')
    arrive('conn-1')
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect(givenBack).toEqual(['conn-1'])
    await expect(
      checkoutWithin(
        async () => 'conn-2',
        () => {},
        20,
      ),
    ).resolves.toBe('conn-2')
    await expect(
      checkoutWithin(
        () => Promise.reject(new Error('refused')),
        () => {},
        20,
      ),
    ).rejects.toThrow('refused')
  })
})

describe('atMostEvery', () => {
  it('starts the work once a period and drops its failures', async () => {
    let now = 0
    let runs = 0
    const tick = atMostEvery(
      100,
      async () => {
        runs++
        throw new Error('housekeeping failed')
      },
      () => now,
    )
    tick()
    now = 100
    tick()
    tick()
    now = 150
    tick()
    now = 200
    tick()
    await new Promise((resolve) => setTimeout(resolve, 0))
    expect(runs).toBe(2)
  })
})

describe('checkAcquireTimeout', () => {
  it('takes whole milliseconds from 1 and names the caller otherwise', () => {
    expect(checkAcquireTimeout('someStore', 3000)).toBe(3000)
    for (const bad of [0, 1.5, -1, 2 ** 31, Number.NaN]) {
      expect(() => checkAcquireTimeout('someStore', bad)).toThrow(/someStore: `acquireTimeoutMs`/)
    }
  })
})

describe('pruneRound', () => {
  it('runs batches while they come back full, and stops at the first that is not', async () => {
    const backlog = [PRUNE_BATCH, PRUNE_BATCH, 120, PRUNE_BATCH]
    const limits: number[] = []
    const deleted = await pruneRound(async (limit) => {
      limits.push(limit)
      return backlog.shift() ?? 0
    })
    expect(deleted).toBe(2 * PRUNE_BATCH + 120)
    expect(limits).toEqual([PRUNE_BATCH, PRUNE_BATCH, PRUNE_BATCH])
  })

  it('stops at its batch limit when every batch is full', async () => {
    let calls = 0
    await pruneRound(async () => {
      calls++
      return PRUNE_BATCH
    })
    expect(calls).toBe(PRUNE_ROUND_BATCHES)
  })

  it('stops once its time budget is spent', async () => {
    let clock = 0
    let calls = 0
    await pruneRound(
      async () => {
        calls++
        clock += PRUNE_ROUND_BUDGET_MS / 2
        return PRUNE_BATCH
      },
      () => clock,
    )
    expect(calls).toBe(2)
  })
})

import { describe, expect, it } from 'vitest'
import { nextPoll, planFollow, quotaStop } from './follow-pacing.js'
import { SERVICE_PACE } from './service-pace.js'

describe('planFollow', () => {
  it('against the service: a look a minute, 2 calls a look, 2,880 calls a day, 1.15 % of the quota', () => {
    const plan = planFollow(SERVICE_PACE)
    expect(plan).toMatchObject({ intervalMs: 60_000, callsPerPoll: 2, callsPerDay: 2_880 })
    expect(plan.dailyShareOfQuota).toBeCloseTo(0.01152, 5)
  })

  it('an emulator 60x faster: a look a second, the same cost per day of its time; never faster than 1 s', () => {
    const fast = {
      source: 'emulator',
      timeScale: 60,
      batchIntervalMs: 1_000,
      liveEvents: true,
    } as const
    expect(planFollow(fast)).toMatchObject({ intervalMs: 1_000, callsPerDay: 2_880 })
    const faster = {
      source: 'emulator',
      timeScale: 600,
      batchIntervalMs: 100,
      liveEvents: true,
    } as const
    // Held at 1 s: ten times fewer looks per day of emulator time.
    expect(planFollow(faster)).toMatchObject({ intervalMs: 1_000, callsPerDay: 288 })
  })

  it("counts against the account's own quota once an answer said it", () => {
    const quota = { usedBefore: 0, used: 1, limit: 100_000, remaining: 99_999 }
    expect(planFollow(SERVICE_PACE, { quota }).dailyShareOfQuota).toBeCloseTo(0.0288, 5)
  })
})

describe('nextPoll', () => {
  const base = { intervalMs: 60_000, msUntilReset: 0, lowStreak: 0, random: 0.5 }

  it('on time: the interval plus up to 10 % jitter, never less', () => {
    expect(nextPoll({ ...base, rateLimit: undefined, random: 0 }).delayMs).toBe(60_000)
    expect(nextPoll({ ...base, rateLimit: undefined, random: 0.999 }).delayMs).toBeLessThan(66_000)
    const plenty = { limit: 120, remaining: 100, reset: 0 }
    expect(nextPoll({ ...base, rateLimit: plenty })).toMatchObject({
      reason: 'interval',
      lowStreak: 0,
    })
  })

  it('backs off while X-RateLimit-Remaining is low: doubling, at most 8x, never before the window clears', () => {
    const low = { limit: 120, remaining: 12, reset: 0 }
    const first = nextPoll({ ...base, rateLimit: low, random: 0 })
    expect(first).toMatchObject({ reason: 'rate_limit_low', lowStreak: 1, delayMs: 120_000 })
    const third = nextPoll({ ...base, rateLimit: low, random: 0, lowStreak: 2 })
    expect(third.delayMs).toBe(480_000)
    const tenth = nextPoll({ ...base, rateLimit: low, random: 0, lowStreak: 9 })
    expect(tenth.delayMs).toBe(480_000)
    const short = { ...base, intervalMs: 1_000, rateLimit: low, random: 0, msUntilReset: 45_000 }
    expect(nextPoll(short).delayMs).toBe(45_000)
    // Recovered: back to the interval, the streak forgotten.
    const ok = nextPoll({ ...base, rateLimit: { ...low, remaining: 13 }, lowStreak: 3, random: 0 })
    expect(ok).toMatchObject({ reason: 'interval', lowStreak: 0, delayMs: 60_000 })
  })
})

describe('quotaStop', () => {
  const quota = (usedBefore: number) => ({
    usedBefore,
    used: usedBefore + 1,
    limit: 250_000,
    remaining: 250_000 - usedBefore - 1,
  })

  it('goes on while a look still leaves 1 % of the quota; stops before it would not', () => {
    expect(quotaStop(undefined)).toBeUndefined()
    expect(quotaStop(quota(247_497))).toBeUndefined()
    expect(quotaStop(quota(247_498))).toMatchObject({ reason: 'quota_low', reserve: 2_500 })
  })
})

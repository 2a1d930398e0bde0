import type { QuotaState, RateLimitState } from '../types.js'
import { DAY_MS, type ServicePace, SPEC_MONTHLY_QUOTA } from './service-pace.js'

/** Calls one look of `followDeliveries` makes: the newest page of deliveries, and the endpoint. */
export const FOLLOW_CALLS_PER_POLL = 2
/** However fast an emulator runs, no look sooner than this (real ms) after the last. */
export const MIN_POLL_MS = 1_000
/** A look waits its interval plus up to this share of it more, so pollers do not fall in step. */
export const POLL_JITTER = 0.1
/** `X-RateLimit-Remaining` at or below this share of the limit is low: the poller backs off. */
export const LOW_RATE_SHARE = 0.1
/** Longest back-off, as a multiple of the interval. */
export const MAX_BACKOFF_FACTOR = 8
/** Calls kept unused for the account's other work when a poller stops: this share of the quota. */
export const QUOTA_RESERVE_SHARE = 0.01

/** What following will cost, computed before the first look: the CLI prints it. */
export interface FollowPlan {
  /** Real ms between two looks, before jitter. */
  intervalMs: number
  callsPerPoll: number
  /** Looks per day of service time (the emulator's own days when it runs faster). */
  pollsPerDay: number
  /** Calls per day of service time. */
  callsPerDay: number
  /** The quota it is counted against: the account's, from the answers, else the spec's 250,000. */
  monthlyQuota: number
  /** `callsPerDay / monthlyQuota`, a fraction (0.0115 = 1.15 %). */
  dailyShareOfQuota: number
  pace: ServicePace
}

/**
 * The interval and cost of a follow: one look per batch interval of the service
 * (a minute, divided by the emulator's time scale), never sooner than
 * {@link MIN_POLL_MS}; `intervalMs` overrides it.
 */
export function planFollow(
  pace: ServicePace,
  options: { intervalMs?: number | undefined; quota?: QuotaState | undefined } = {},
): FollowPlan {
  const intervalMs = options.intervalMs ?? Math.max(MIN_POLL_MS, pace.batchIntervalMs)
  const pollsPerDay = DAY_MS / (intervalMs * pace.timeScale)
  const callsPerDay = Math.round(pollsPerDay * FOLLOW_CALLS_PER_POLL)
  const monthlyQuota = options.quota?.limit ?? SPEC_MONTHLY_QUOTA
  return {
    intervalMs,
    callsPerPoll: FOLLOW_CALLS_PER_POLL,
    pollsPerDay,
    callsPerDay,
    monthlyQuota,
    dailyShareOfQuota: callsPerDay / monthlyQuota,
    pace,
  }
}

/** When the next look goes out, and why then. */
export interface NextPoll {
  /** Real ms from now. */
  delayMs: number
  /** `interval`: on time. `rate_limit_low`: the account's window is nearly used up. */
  reason: 'interval' | 'rate_limit_low'
  /** Looks in a row that found the window low (0 when it was not). */
  lowStreak: number
  /** The window as the last answer reported it, when the reason is the rate limit. */
  rateLimit?: RateLimitState
}

/**
 * The wait before the next look: the interval plus jitter; when the last answer
 * left at most {@link LOW_RATE_SHARE} of the rate limit (the account's other
 * work is using it), twice as long for each such look in a row, up to
 * {@link MAX_BACKOFF_FACTOR} times, and never before the window clears.
 */
export function nextPoll(input: {
  intervalMs: number
  rateLimit: RateLimitState | undefined
  /** Real ms until the rate-limit window clears. */
  msUntilReset: number
  lowStreak: number
  /** In [0, 1). */
  random: number
}): NextPoll {
  const jittered = input.intervalMs * (1 + POLL_JITTER * input.random)
  const { rateLimit } = input
  const low =
    rateLimit !== undefined &&
    rateLimit.remaining <= Math.max(FOLLOW_CALLS_PER_POLL, rateLimit.limit * LOW_RATE_SHARE)
  if (!low) return { delayMs: jittered, reason: 'interval', lowStreak: 0 }
  const lowStreak = input.lowStreak + 1
  const factor = Math.min(MAX_BACKOFF_FACTOR, 2 ** lowStreak)
  return {
    delayMs: Math.max(jittered * factor, input.msUntilReset),
    reason: 'rate_limit_low',
    lowStreak,
    rateLimit,
  }
}

/** Why a follow stops before the monthly quota runs out, or undefined to go on. */
export interface QuotaStop {
  reason: 'quota_low' | 'quota_exceeded'
  quota: QuotaState | undefined
  /** Calls the follow leaves for the account's other work. */
  reserve: number
}

/**
 * Stops a follow while the account still has {@link QUOTA_RESERVE_SHARE} of its
 * quota (2,500 of 250,000) plus one more look left: the publisher's production
 * integration shares the quota, and after it the whole account gets 429 until
 * the 1st.
 */
export function quotaStop(quota: QuotaState | undefined): QuotaStop | undefined {
  if (!quota) return undefined
  const reserve = Math.ceil(quota.limit * QUOTA_RESERVE_SHARE)
  if (quota.remaining - FOLLOW_CALLS_PER_POLL >= reserve) return undefined
  return { reason: 'quota_low', quota, reserve }
}

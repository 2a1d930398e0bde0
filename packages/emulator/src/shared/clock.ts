import { performance } from 'node:perf_hooks'

/** Service time of the emulator: real time times a scale, plus whatever was advanced by hand. */
export interface Clock {
  /** Service time now, epoch ms. */
  now(): number
  /** Service ms per real ms. */
  readonly timeScale: number
  /** Moves service time forward by `ms` (never back). */
  advance(ms: number): void
  /** Moves service time forward to `at` when it is still before it. */
  advanceTo(at: number): void
  /** Real ms from now until service time `at` (0 when it has passed). */
  realDelay(at: number): number
}

/** Options of {@link createClock}. */
export interface ClockOptions {
  /** Service time at the start, epoch ms. Default now. */
  start?: number
  /** Service ms per real ms. Default 1. */
  timeScale?: number
}

/**
 * A clock that runs `timeScale` times faster than real time and can be advanced,
 * so the whole retry schedule (about 45 hours) can pass in a moment.
 */
export function createClock(options: ClockOptions = {}): Clock {
  const timeScale = options.timeScale ?? 1
  if (!(timeScale > 0) || !Number.isFinite(timeScale)) {
    throw new TypeError('createClock: `timeScale` must be a number > 0')
  }
  const origin = options.start ?? Date.now()
  const realStart = performance.now()
  let advanced = 0
  const now = () => Math.floor(origin + (performance.now() - realStart) * timeScale + advanced)
  return {
    now,
    timeScale,
    advance(ms) {
      if (ms > 0) advanced += ms
    },
    advanceTo(at) {
      const gap = at - now()
      if (gap > 0) advanced += gap
    },
    realDelay: (at) => Math.max(0, (at - now()) / timeScale),
  }
}

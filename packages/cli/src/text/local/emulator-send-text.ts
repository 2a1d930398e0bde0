/**
 * One delivery sent by hand (`affiliate-webhooks send`): what the service would
 * make of the answer, as lines for the terminal.
 */

import { MAX_ATTEMPTS, RETRY_SCHEDULE_MS } from '@affiliate-webhooks/emulator'
import type { AttemptResult } from '@affiliate-webhooks/emulator/internal'
import { formatDuration } from './simulation-text.js'

/**
 * What the service would do after attempt `attempt` failed: the next attempt
 * and its offset from the first, or, after the last, mark the delivery failed.
 */
export function afterFailedAttempt(attempt: number | string): string {
  const n = Number(attempt)
  if (!Number.isInteger(n) || n < 1) return 'the service would retry'
  const offset = RETRY_SCHEDULE_MS[n - 1]
  return offset === undefined
    ? `this was attempt ${n} of ${MAX_ATTEMPTS}: the service would mark the delivery failed`
    : `the service would retry, attempt ${n + 1} at +${formatDuration(offset)}`
}

/**
 * When a retrying delivery's next attempt comes, after attempt `attempt` failed:
 * the schedule's offset, in the service's time (on the emulator, its own clock,
 * which `emulator clock` moves and a time scale speeds up), so no second clock
 * stands beside the line's own stamp.
 */
export function nextAttemptIn(attempt: number | null): string {
  const offset = attempt === null ? undefined : RETRY_SCHEDULE_MS[attempt - 1]
  return offset === undefined
    ? 'next attempt due (service time)'
    : `next attempt ${(attempt as number) + 1} in ${formatDuration(offset)} of service time`
}

/**
 * One line on an attempt's outcome as the service counts it: acknowledged, not
 * acknowledged (a redirect is not followed), or no answer; a failure says what
 * the service would do next (see {@link afterFailedAttempt}).
 */
export function attemptOutcome(result: AttemptResult, attempt: number | string): string {
  const ms = `${Math.round(result.durationMs)} ms`
  const status = result.responseStatus
  if (status === undefined || result.errorMessage !== undefined) {
    return `no answer: ${result.errorMessage} (after ${ms}); ${afterFailedAttempt(attempt)}`
  }
  if (result.ok) return `${status} acknowledged in ${ms}`
  const verdict =
    status >= 300 && status < 400 ? 'redirect, not followed: a failure,' : 'not acknowledged:'
  return `${status} ${verdict} ${afterFailedAttempt(attempt)} (answered in ${ms})`
}

import type { FailureStreak } from '../store/event-store.js'

/** Streak lengths at which the receiver warns; the service disables the endpoint at 20. */
export const FAILURE_STREAK_WARNINGS: readonly number[] = [5, 10, 15]

/** After this many failed attempts in a row the service disables the endpoint. */
export const SERVICE_DISABLES_AFTER = 20

/**
 * The warning for a streak that just reached one of {@link FAILURE_STREAK_WARNINGS},
 * or undefined. The store counts atomically, so with several processes exactly one
 * of them sees each length and logs it.
 */
export function failureStreakWarning(streak: FailureStreak): string | undefined {
  if (!FAILURE_STREAK_WARNINGS.includes(streak.count)) return undefined
  const counts = new Map<string, number>()
  for (const code of streak.recentCodes) counts.set(code, (counts.get(code) ?? 0) + 1)
  const codes = [...counts].map(([code, n]) => (n > 1 ? `${code} x${n}` : code)).join(', ')
  return `affiliate-webhooks: ${streak.count} answers in a row were not 2xx (latest: ${codes}); the service disables an endpoint after ${SERVICE_DISABLES_AFTER} failed attempts in a row and then queues nothing for it. Run \`npx @affiliate-webhooks/cli doctor\` to see the endpoint's recent deliveries and what to fix.`
}

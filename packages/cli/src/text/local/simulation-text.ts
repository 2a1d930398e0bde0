/**
 * The text of a simulation: its progress line and its summary table, as
 * `affiliate-webhooks simulate` and the demo print them, and the small
 * formatters they are made of.
 */
import { SERVICE_DISABLES_AFTER } from '@affiliate-webhooks/core/internal'
import type { SimulationProgress, SimulationReport } from '@affiliate-webhooks/emulator/internal'
import { formatRows } from '../table.js'

/** `1.9 s`, `12 min 5 s`, `1 h 54 min`, `2 d 3 h`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`
  const s = ms / 1000
  if (s < 60) return `${s.toFixed(1)} s`
  const parts: [number, string][] = [
    [Math.floor(s / 86_400), 'd'],
    [Math.floor((s % 86_400) / 3600), 'h'],
    [Math.floor((s % 3600) / 60), 'min'],
    [Math.floor(s % 60), 's'],
  ]
  const first = parts.findIndex(([value]) => value > 0)
  return parts
    .slice(first, first + 2)
    .filter(([value]) => value > 0)
    .map(([value, unit]) => `${value} ${unit}`)
    .join(' ')
}

/** `200 x 78, 500 x 10`, largest first, status codes before `timeout`/`connection_error`. */
export function formatCounts(counts: Record<string, number>, separator = ' x '): string {
  const entries = Object.entries(counts).sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
  return entries.length === 0 ? '-' : entries.map(([k, n]) => `${k}${separator}${n}`).join(', ')
}

/** One line, short enough to rewrite in place with `\r`. */
export function formatSimulationProgress(progress: SimulationProgress): string {
  const { deliveries, attempts, endpoint } = progress
  const width = String(progress.plannedEvents).length
  return [
    `events ${String(progress.events).padStart(width)}/${progress.plannedEvents}`,
    `succeeded ${deliveries.succeeded}`,
    `retrying ${deliveries.retrying}`,
    `failed ${deliveries.failed}`,
    `attempts ${attempts.total} (${progress.inFlight} in flight)`,
    `endpoint ${endpoint.status}`,
    `service time ${formatDuration(progress.serviceElapsedMs)}`,
  ].join('  ')
}

/**
 * Why the endpoint got disabled when the clock ran faster than real time, and the
 * flag that keeps it enabled for a crash or restart test; undefined otherwise.
 */
export function disabledUnderCompression(report: SimulationReport): string | undefined {
  const { settings, stats } = report
  if (stats.endpoint.status !== 'disabled' || !(settings.timeScale > 1)) return undefined
  const second = formatDuration(1000 * settings.timeScale)
  return `time scale ${settings.timeScale}: a real second is ${second} of service time, so a receiver down or restarting for a few real seconds can fail ${settings.disableAfterFailures} attempts in a row, which disables the endpoint as the service would, and the rest of those conversions' events are then never delivered (queued deliveries fail, later events are not queued); for a crash or restart test, --disable-after off keeps the endpoint enabled`
}

/**
 * Why the answers do not match what was sent, when `duplicate` is not the number
 * of replays: each answer is what the store decided, and stores differ on a replay
 * of an event older than its conversion's newest. Undefined when they match.
 */
export function answersDifferFromReplays(report: SimulationReport): string | undefined {
  const { stats } = report
  const duplicates = stats.outcomes.duplicate ?? 0
  if (duplicates === stats.replays) return undefined
  return `${stats.replays} replays, ${duplicates} answered duplicate: the answers are what the receiver's store decided, not what was sent. A replay of an event its conversion has moved past is stale on the SQL stores (they check the conversion's order first) and duplicate on the memory and Redis stores; an event held back past a newer one of its conversion is stale; a replay of a delivery that had failed is processed`
}

/** The summary table `simulate` prints, also what `npm start` shows. */
export function formatSimulationSummary(report: SimulationReport): string {
  const { stats, settings } = report
  const { deliveries, attempts, endpoint } = stats
  const limit = settings.disableAfterFailures
  const endpointText =
    endpoint.status === 'disabled'
      ? `DISABLED after ${limit} failed attempts in a row${endpoint.consecutiveFailures > limit ? ` (${endpoint.consecutiveFailures} by the end)` : ''}`
      : `active, never disabled (${Number.isFinite(limit) ? '' : 'disabling off; '}${endpoint.consecutiveFailures} failed attempts in a row at the end)`
  const rows: [string, string][] = [
    [
      'events',
      `${stats.events}${stats.notQueued ? ` (${stats.notQueued} not queued: endpoint disabled)` : ''}`,
    ],
    ['deliveries', String(deliveries.total)],
    ['  succeeded', String(deliveries.succeeded)],
    ['  failed', String(deliveries.failed)],
  ]
  if (deliveries.pending + deliveries.retrying > 0) {
    rows.push(['  unfinished', `${deliveries.pending} pending, ${deliveries.retrying} retrying`])
  }
  rows.push(
    ['  replayed (duplicates)', String(stats.replays)],
    ['  held back (reordered)', String(report.heldBack)],
    ['attempts', String(attempts.total)],
    ['  failed', String(attempts.failed)],
    ['status codes', formatCounts(stats.statusCodes)],
    ['answers', formatCounts(stats.outcomes, ' ')],
    ['endpoint', endpointText],
    [
      'time',
      `${formatDuration(stats.realElapsedMs)} (${formatDuration(stats.serviceElapsedMs)} of service time)`,
    ],
  )
  const lines = [
    `Simulated ${settings.conversions} conversion lifecycles -> ${report.url}`,
    `time scale ${settings.timeScale}, concurrency ${settings.concurrency}, duplicates ${settings.duplicates}, reorder ${settings.reorder}, timeout ${settings.timeoutMs} ms, seed ${settings.seed}${limit === SERVICE_DISABLES_AFTER ? '' : `, disable after ${Number.isFinite(limit) ? limit : 'off'}`}`,
    '',
    formatRows(rows),
  ]
  if (report.failed.length > 0) {
    lines.push('', 'Failed deliveries:')
    for (const delivery of report.failed.slice(0, 10)) {
      const last = delivery.attempts.at(-1)
      const answer = last
        ? (last.errorMessage ?? `${last.responseStatus} ${last.responseBody ?? ''}`)
        : '-'
      const count = delivery.attempts.length
      const disabled = delivery.failedBecause === 'endpoint_disabled'
      const because =
        count === 0
          ? 'never sent: the endpoint was disabled'
          : `${count} attempt${count === 1 ? '' : 's'}${disabled ? ', then the endpoint was disabled' : ''}`
      // One line each: an HTML error page would otherwise fill the screen.
      const oneLine = answer.replace(/\s+/g, ' ').trim()
      lines.push(
        `  ${delivery.id} ${delivery.eventType} ${delivery.eventId} (${because}); last answer: ${oneLine.length > 80 ? `${oneLine.slice(0, 79)}…` : oneLine}`,
      )
    }
    if (report.failed.length > 10) lines.push(`  ... and ${report.failed.length - 10} more`)
  }
  lines.push(
    '',
    report.aborted
      ? 'Stopped before every delivery ended.'
      : report.ok
        ? 'Every delivery succeeded.'
        : report.failed.length > 0
          ? `${report.failed.length} of ${deliveries.total} deliveries failed.`
          : 'The endpoint was disabled.',
  )
  const counts = answersDifferFromReplays(report)
  if (counts) lines.push(`note: ${counts}.`)
  const why = disabledUnderCompression(report)
  if (why) lines.push(`note: ${why}.`)
  return lines.join('\n')
}

/**
 * The management API's objects as people read them on a terminal: endpoints,
 * deliveries, the live tail, replay and recovery summaries, health findings.
 * What `affiliate-webhooks` prints; `--json` prints the objects themselves. The
 * client returns the objects; these lines are the CLI's.
 */
import type { Delivery, WebhookEndpoint } from '@affiliate-webhooks/client'
import type {
  FollowEvent,
  RecoveryReport,
  ReplaySummary,
} from '@affiliate-webhooks/client/internal'
import { formatRows, formatTable } from '../table.js'
import type { HealthFinding } from './health-findings.js'

/** One endpoint as rows of name and value, for people. */
export function formatEndpoint(endpoint: WebhookEndpoint): string {
  return formatRows([
    ['id', endpoint.id],
    ['url', endpoint.url],
    ['status', endpoint.status],
    ['events', endpoint.events.join(', ')],
    ['description', endpoint.description ?? '-'],
    ['consecutive failures', String(endpoint.consecutiveFailures)],
    ['disabled at', endpoint.disabledAt ?? '-'],
    ['last delivery', endpoint.lastDeliveryAt ?? '-'],
  ])
}

/** Endpoints as a table, or how to create the first. */
export function formatEndpoints(endpoints: readonly WebhookEndpoint[]): string {
  if (endpoints.length === 0)
    return 'no endpoints (affiliate-webhooks endpoints create --url URL ...)'
  return formatTable(
    ['ID', 'STATUS', 'FAILURES', 'URL', 'EVENTS'],
    endpoints.map((e) => [
      e.id,
      e.status,
      String(e.consecutiveFailures),
      e.url,
      e.events.join(','),
    ]),
  )
}

/** The receiver's answer, or why there was none, in one short cell. */
export const answerOf = (delivery: Delivery): string =>
  delivery.responseStatus
    ? `${delivery.responseStatus} ${(delivery.responseBody ?? '').replace(/\s+/g, ' ').slice(0, 60)}`
    : (delivery.errorMessage ?? '-')

/**
 * One line of `deliveries --follow`: time, event, type, attempt, status (and the
 * receiver's code), ms; with `endpoint`, the endpoint's id after the time (several endpoints).
 */
export function formatFollowEvent(
  event: FollowEvent,
  options: { endpoint?: boolean } = {},
): string {
  const time =
    options.endpoint && event.type === 'attempt'
      ? `${event.at.slice(11, 19)}  ${event.endpointId}`
      : event.at.slice(11, 19)
  if (event.type === 'endpoint') {
    return `${time}  ${event.endpointId} ${event.status === 'disabled' ? 'disabled: deliveries stopped' : `is ${event.status} again`}`
  }
  const said = event.errorCode ?? event.outcome
  const answer = event.responseStatus
    ? `${event.responseStatus}${said ? ` ${said}` : ''}`
    : (event.errorMessage ?? 'no answer')
  return [
    time,
    event.eventId ?? event.deliveryId,
    event.eventType ?? '-',
    `attempt ${event.attempt ?? '?'}`,
    `${answer} (${event.status})`,
    `${event.durationMs ?? '-'} ms`,
  ].join('  ')
}

/** Deliveries as a table: event, type, status, attempts, created, the answer. */
export function formatDeliveries(deliveries: readonly Delivery[]): string {
  if (deliveries.length === 0) return 'no deliveries'
  return formatTable(
    ['DELIVERY', 'EVENT', 'TYPE', 'STATUS', 'ATTEMPTS', 'CREATED', 'ANSWER'],
    deliveries.map((d) => [
      d.id,
      d.eventId ?? '-',
      d.eventType ?? '-',
      d.status,
      d.attempts === undefined ? '-' : String(d.attempts),
      d.createdAt ?? '-',
      answerOf(d),
    ]),
  )
}

/** What `replay --failed` did, as a person reads it. */
export function formatReplaySummary(summary: ReplaySummary, total: number): string {
  const lines = [
    `replayed ${summary.replayed} of ${total}${summary.alreadyReplaying ? `, ${summary.alreadyReplaying} already replaying` : ''}${summary.failed.length ? `, ${summary.failed.length} refused` : ''}${summary.interrupted ? ' (interrupted)' : ''}`,
  ]
  for (const { deliveryId, error } of summary.failed.slice(0, 10))
    lines.push(`  ${deliveryId}: ${error}`)
  if (summary.failed.length > 10) lines.push(`  ... and ${summary.failed.length - 10} more`)
  return lines.join('\n')
}

/** What `recover` did, and the window it cannot repair. */
export function formatRecovery(report: RecoveryReport): string {
  const lines: string[] = []
  if (report.reenabledAt) {
    lines.push(
      // The service's clock only: this machine's time of re-enabling stays in --json.
      `${report.endpointId} re-enabled; the service had disabled it at ${report.disabledAt ?? 'a time it did not say'} (the service's clock)`,
    )
  } else {
    lines.push(`${report.endpointId} was active; nothing to re-enable`)
  }
  lines.push(
    `replayed ${report.replay.replayed} of ${report.failedFound} failed deliver${report.failedFound === 1 ? 'y' : 'ies'}${report.since ? ` since ${report.since}` : ''}${report.replay.alreadyReplaying ? ` (${report.replay.alreadyReplaying} already replaying)` : ''}${report.replay.failed.length ? `, ${report.replay.failed.length} refused` : ''}`,
  )
  if (report.reenabledAt) {
    lines.push(
      '',
      // One clock: the start is the service's; the end is the re-enabling itself,
      // whose service time no answer tells (this machine's clock may run apart).
      `Not recoverable by replay: from ${report.disabledAt ?? 'the moment it was disabled'} (the service's clock) until this command re-enabled it,`,
      'the service queued nothing for this endpoint. Conversions created or changed in that',
      "window were never sent and never will be: reconcile them from the service's conversion",
      'reports for that window.',
    )
  }
  return lines.join('\n')
}

/** {@link checkEndpointHealth}'s findings under the endpoint's line, each marked ok, ! or x, with its fix. */
export function formatHealthFindings(
  endpoint: WebhookEndpoint,
  findings: readonly HealthFinding[],
): string {
  const mark = { ok: 'ok', warning: '!', problem: 'x' } as const
  const lines = [`${endpoint.id}  ${endpoint.url}  (${endpoint.status})`, '']
  for (const finding of findings) {
    lines.push(`[${mark[finding.level]}] ${finding.title}`)
    for (const line of finding.detail.split('\n')) lines.push(`    ${line}`)
    if (finding.fix) lines.push(`    fix: ${finding.fix}`)
    lines.push('')
  }
  return lines.join('\n').trimEnd()
}

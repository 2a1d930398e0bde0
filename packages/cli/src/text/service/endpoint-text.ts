/**
 * The management API's objects as people read them on a terminal: endpoints,
 * deliveries, the live tail, replay and recovery summaries, health findings.
 * What `affiliate-webhooks` prints; `--json` prints the objects themselves. The
 * client returns the objects; these lines are the CLI's.
 */
import type { Delivery, WebhookEndpoint } from '@affiliate-webhooks/client'
import type {
  FollowEvent,
  LeftDelivery,
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

/** How many of the failed deliveries `recover` left it names on a terminal; --json has all. */
const LEFT_SHOWN = 20

/** Why `recover` left a failed delivery, in words. */
function whyLeft(left: LeftDelivery, since: string | null): string {
  const ack = left.acknowledgement
  if (left.reason === 'before_since') {
    return `created ${left.createdAt ?? 'at a time the service did not say'}, before --since ${since}`
  }
  if (ack?.by === 'delivery') {
    return `its event was acknowledged: delivery ${ack.deliveryId} of the same event succeeded`
  }
  const answer = ack ? `${ack.responseStatus}${ack.outcome ? ` ${ack.outcome}` : ''}` : '2xx'
  return `its event was acknowledged: the receiver answered ${answer}; a later replay came due while the endpoint was disabled and was marked failed unsent`
}

/** What `recover` did, which failed deliveries it left and why, and the window it cannot repair. */
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
  const { replay } = report
  lines.push(
    `replayed ${replay.replayed} of ${report.toReplay} failed deliver${report.toReplay === 1 ? 'y' : 'ies'} whose event was never acknowledged${report.since ? `, created since ${report.since}` : ''}${replay.alreadyReplaying ? ` (${replay.alreadyReplaying} already replaying)` : ''}${replay.failed.length ? `, ${replay.failed.length} refused` : ''}${replay.interrupted ? ' (interrupted)' : ''}`,
  )
  for (const { deliveryId, error } of replay.failed)
    lines.push(`  ${deliveryId}: refused: ${error}`)
  if (report.left.length > 0) {
    const n = report.left.length
    lines.push(
      `left ${n} of ${report.failedFound} failed deliver${report.failedFound === 1 ? 'y' : 'ies'}:`,
    )
    for (const left of report.left.slice(0, LEFT_SHOWN)) {
      lines.push(
        `  ${left.deliveryId}${left.eventId ? ` (${left.eventId})` : ''}: ${whyLeft(left, report.since)}`,
      )
    }
    if (n > LEFT_SHOWN) lines.push(`  ... and ${n - LEFT_SHOWN} more (--json lists each)`)
  }
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

import type { Delivery, WebhookEndpoint } from '@affiliate-webhooks/client'
import { formatRows } from '../report.js'
import { table } from './api.js'

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

export function formatEndpoints(endpoints: readonly WebhookEndpoint[]): string {
  if (endpoints.length === 0)
    return 'no endpoints (affiliate-webhooks endpoints create --url URL ...)'
  return table(
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

export function formatDeliveries(deliveries: readonly Delivery[]): string {
  if (deliveries.length === 0) return 'no deliveries'
  return table(
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

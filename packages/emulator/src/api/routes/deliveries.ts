import type { DeliveryRecord } from '../../delivery/delivery-record.js'
import type { Engine } from '../../delivery/engine.js'
import { ApiError } from '../../shared/api-error.js'
import { paginate } from '../paging.js'
import { parseDeliveryQuery } from '../validation.js'
import { iso, ok, path, type Route } from './route.js'
import { findEndpoint } from './webhooks.js'

/** A delivery as the API shows it (no body, no secret). */
export function deliveryJson(delivery: DeliveryRecord) {
  return {
    id: delivery.id,
    webhookId: delivery.webhookId,
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    status: delivery.status,
    attempts: delivery.made,
    attemptsTotal: delivery.attemptsTotal,
    replays: delivery.replays,
    nextAttemptAt: iso(delivery.nextAttemptAt ?? null),
    createdAt: iso(delivery.createdAt),
    responseStatus: delivery.responseStatus,
    responseBody: delivery.responseBody,
    durationMs: delivery.durationMs,
    errorMessage: delivery.errorMessage,
  }
}

/** `/v1/webhooks/{id}/deliveries`: an endpoint's deliveries, a page at a time, and replay. */
export function createDeliveryRoutes(engine: Engine): Route[] {
  return [
    {
      method: 'GET',
      pattern: path('/v1/webhooks/{id}/deliveries'),
      access: 'webhooks:read',
      handle({ params, query }) {
        const endpoint = findEndpoint(engine, params[0])
        const { page, size, status } = parseDeliveryQuery(query)
        const all = engine
          .deliveriesOf(endpoint.id)
          .filter((delivery) => status === undefined || delivery.status === status)
        const { rows, pagination } = paginate(all, page, size)
        return { ...ok(rows.map(deliveryJson)), extra: { pagination } }
      },
    },
    {
      method: 'POST',
      pattern: path('/v1/webhooks/{id}/deliveries/{id}/replay'),
      access: 'webhooks:write',
      handle({ params }) {
        const endpoint = findEndpoint(engine, params[0])
        const delivery = engine.delivery(endpoint.id, params[1] as string)
        if (!delivery) {
          throw new ApiError('delivery_not_found', `No delivery ${params[1]} on ${endpoint.id}.`)
        }
        engine.replay(delivery)
        return ok(
          { deliveryId: delivery.id, eventId: delivery.eventId, status: delivery.status },
          'Replay queued: a fresh set of eight attempts.',
          202,
        )
      },
    },
  ]
}

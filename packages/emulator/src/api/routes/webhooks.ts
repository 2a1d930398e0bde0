import { disableEndpoint, enableEndpoint } from '../../delivery/endpoint-state.js'
import type { EndpointRecord, Engine } from '../../delivery/engine.js'
import { ApiError } from '../../shared/api-error.js'
import { parseWebhookInput } from '../validation.js'
import { iso, ok, path, type Route } from './route.js'

/** Most endpoints an account may have. */
export const MAX_ENDPOINTS = 5

/** An endpoint disabled or enabled by a PATCH. */
export interface EndpointStatusChange {
  webhookId: string
  status: 'active' | 'disabled'
  /** Service time, epoch ms. */
  at: number
}

/** What the webhook routes need besides the engine. */
export interface WebhookRouteOptions {
  /** Accept loopback and private URLs (a local receiver). */
  allowLoopback: boolean
  onEndpointStatus?: (change: EndpointStatusChange) => void
}

/** An endpoint as the API shows it; the secret only when asked (create and rotate). */
export function endpointJson(endpoint: EndpointRecord, withSecret = false) {
  return {
    id: endpoint.id,
    url: endpoint.url,
    events: endpoint.events,
    description: endpoint.description,
    status: endpoint.state.status,
    consecutiveFailures: endpoint.state.consecutiveFailures,
    disabledAt: iso(endpoint.state.disabledAt),
    lastDeliveryAt: iso(endpoint.state.lastDeliveryAt),
    createdAt: iso(endpoint.createdAt),
    ...(withSecret ? { secret: endpoint.secret } : {}),
  }
}

/** The endpoint with this id, or 404 `webhook_not_found`. */
export function findEndpoint(engine: Engine, id: string | undefined): EndpointRecord {
  const endpoint = engine.endpoint(id as string)
  if (!endpoint) throw new ApiError('webhook_not_found', `No webhook endpoint ${id}.`)
  return endpoint
}

function createWebhook(engine: Engine, options: WebhookRouteOptions): Route {
  return {
    method: 'POST',
    pattern: path('/v1/webhooks'),
    access: 'webhooks:write',
    body: true,
    handle({ body }) {
      const input = parseWebhookInput(body, {
        partial: false,
        allowLoopback: options.allowLoopback,
      })
      if (engine.endpoints().length >= MAX_ENDPOINTS) {
        throw new ApiError(
          'webhook_limit_reached',
          `An account has at most ${MAX_ENDPOINTS} webhook endpoints.`,
        )
      }
      const endpoint = engine.addEndpoint({
        url: input.url as string,
        events: input.events as string[],
        description: input.description ?? null,
      })
      return ok(endpointJson(endpoint, true), 'Webhook endpoint registered.', 201)
    },
  }
}

function updateWebhook(engine: Engine, options: WebhookRouteOptions): Route {
  return {
    method: 'PATCH',
    pattern: path('/v1/webhooks/{id}'),
    access: 'webhooks:write',
    body: true,
    handle({ params, body }) {
      const endpoint = findEndpoint(engine, params[0])
      const input = parseWebhookInput(body, {
        partial: true,
        allowLoopback: options.allowLoopback,
      })
      if (input.url !== undefined) endpoint.url = input.url
      if (input.events !== undefined) endpoint.events = input.events
      if (input.description !== undefined) endpoint.description = input.description
      const was = endpoint.state.status
      if (input.status === 'active') enableEndpoint(endpoint.state)
      if (input.status === 'disabled') disableEndpoint(endpoint.state, engine.clock.now())
      engine.changed()
      if (input.status !== undefined && input.status !== was) {
        const change = { webhookId: endpoint.id, status: input.status, at: engine.clock.now() }
        options.onEndpointStatus?.(change)
      }
      return ok(endpointJson(endpoint), 'Webhook endpoint updated.')
    },
  }
}

/** `/v1/webhooks`: register, list, read, update, delete, rotate the secret, send a test event. */
export function createWebhookRoutes(engine: Engine, options: WebhookRouteOptions): Route[] {
  return [
    createWebhook(engine, options),
    {
      method: 'GET',
      pattern: path('/v1/webhooks'),
      access: 'webhooks:read',
      handle: () => ok(engine.endpoints().map((endpoint) => endpointJson(endpoint))),
    },
    {
      method: 'GET',
      pattern: path('/v1/webhooks/{id}'),
      access: 'webhooks:read',
      handle: ({ params }) => ok(endpointJson(findEndpoint(engine, params[0]))),
    },
    updateWebhook(engine, options),
    {
      method: 'DELETE',
      pattern: path('/v1/webhooks/{id}'),
      access: 'webhooks:write',
      handle({ params }) {
        const endpoint = findEndpoint(engine, params[0])
        engine.deleteEndpoint(endpoint.id)
        return ok({ id: endpoint.id, deleted: true }, 'Webhook endpoint deleted.')
      },
    },
    {
      method: 'POST',
      pattern: path('/v1/webhooks/{id}/rotate-secret'),
      access: 'webhooks:write',
      handle({ params }) {
        const endpoint = findEndpoint(engine, params[0])
        engine.rotateSecret(endpoint)
        return ok(endpointJson(endpoint, true), 'Secret rotated; the old one is no longer used.')
      },
    },
    {
      method: 'POST',
      pattern: path('/v1/webhooks/{id}/test'),
      access: 'webhooks:write',
      handle({ params }) {
        const delivery = engine.sendTest(findEndpoint(engine, params[0]))
        return ok({ eventId: delivery.eventId, deliveryId: delivery.id }, 'Test event queued.', 202)
      },
    },
  ]
}

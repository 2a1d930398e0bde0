import type { IncomingMessage } from 'node:http'
import type { ApiKey, Scope } from '../../account/api-keys.js'
import { disableEndpoint, enableEndpoint } from '../../delivery/endpoint-state.js'
import type { DeliveryRecord, EndpointRecord, Engine } from '../../delivery/engine.js'
import { ApiError } from '../api-error.js'
import { paginate } from '../paging.js'
import {
  bodyObject,
  parseAdvance,
  parseConversionInput,
  parseDeliveryQuery,
  parseWebhookInput,
} from '../validation.js'

/** Most endpoints an account may have. */
export const MAX_ENDPOINTS = 5

/** What a route hands back: status, message, data and any top-level extras. */
export interface RouteAnswer {
  status: number
  message: string
  data: unknown
  extra?: Record<string, unknown>
}

/** What a route gets. */
export interface RouteContext {
  params: readonly string[]
  query: URLSearchParams
  /** The JSON body, undefined when empty; only for routes that take one. */
  body: unknown
  key: ApiKey
  req: IncomingMessage
}

/** One route of the emulator. */
export interface Route {
  method: string
  pattern: RegExp
  /** `public`: no key (health). `key`: any valid key. Otherwise the scope needed. */
  access: 'public' | 'key' | Scope
  /** Control routes are not the service: not rate limited, not counted. */
  control?: boolean
  /** Keeps working once the monthly quota is used up (GET /v1/me). */
  quotaExempt?: boolean
  /** Parses the body as JSON (malformed_json when it is not). */
  body?: boolean
  handle(context: RouteContext): RouteAnswer | Promise<RouteAnswer>
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())

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

const ID = '([^/]+)'
const path = (pattern: string) => new RegExp(`^${pattern.replaceAll('{id}', ID)}$`)

/** An endpoint disabled or enabled by a PATCH. */
export interface EndpointStatusChange {
  webhookId: string
  status: 'active' | 'disabled'
  /** Service time, epoch ms. */
  at: number
}

/** The `/v1` routes of the spec and the emulator's own control routes. */
export function createRoutes(
  engine: Engine,
  options: {
    allowLoopback: boolean
    /** programId and channelId of a conversion emitted without them. */
    conversionDefaults?: () => { programId: number | null; channelId: number | null }
    onEndpointStatus?: (change: EndpointStatusChange) => void
  },
): Route[] {
  const find = (id: string) => {
    const endpoint = engine.endpoint(id)
    if (!endpoint) throw new ApiError('webhook_not_found', `No webhook endpoint ${id}.`)
    return endpoint
  }
  const ok = (data: unknown, message = 'OK', status = 200): RouteAnswer => ({
    status,
    message,
    data,
  })

  return [
    {
      method: 'GET',
      pattern: path('/v1/health'),
      access: 'public',
      handle: () => ok({ status: 'ok' }, 'The API is up.'),
    },
    {
      method: 'GET',
      pattern: path('/v1/me'),
      access: 'key',
      quotaExempt: true,
      handle: ({ key, req }) =>
        ok({
          ...(key.id === undefined ? {} : { id: key.id }),
          name: key.name ?? 'emulator',
          last4: key.key.slice(-4),
          scopes: key.scopes,
          ipAllowlist: key.ipAllowlist ?? [],
          expiresAt: iso(key.expiresAt ?? null),
          callerIp: req.socket.remoteAddress ?? null,
        }),
    },
    {
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
    },
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
      handle: ({ params }) => ok(endpointJson(find(params[0] as string))),
    },
    {
      method: 'PATCH',
      pattern: path('/v1/webhooks/{id}'),
      access: 'webhooks:write',
      body: true,
      handle({ params, body }) {
        const endpoint = find(params[0] as string)
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
    },
    {
      method: 'DELETE',
      pattern: path('/v1/webhooks/{id}'),
      access: 'webhooks:write',
      handle({ params }) {
        const endpoint = find(params[0] as string)
        engine.deleteEndpoint(endpoint.id)
        return ok({ id: endpoint.id, deleted: true }, 'Webhook endpoint deleted.')
      },
    },
    {
      method: 'POST',
      pattern: path('/v1/webhooks/{id}/rotate-secret'),
      access: 'webhooks:write',
      handle({ params }) {
        const endpoint = find(params[0] as string)
        engine.rotateSecret(endpoint)
        return ok(endpointJson(endpoint, true), 'Secret rotated; the old one is no longer used.')
      },
    },
    {
      method: 'POST',
      pattern: path('/v1/webhooks/{id}/test'),
      access: 'webhooks:write',
      handle({ params }) {
        const delivery = engine.sendTest(find(params[0] as string))
        return ok({ eventId: delivery.eventId, deliveryId: delivery.id }, 'Test event queued.', 202)
      },
    },
    {
      method: 'GET',
      pattern: path('/v1/webhooks/{id}/deliveries'),
      access: 'webhooks:read',
      handle({ params, query }) {
        const endpoint = find(params[0] as string)
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
        const endpoint = find(params[0] as string)
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
    {
      method: 'POST',
      pattern: path('/emulator/conversions'),
      access: 'key',
      control: true,
      body: true,
      handle({ body }) {
        const given = bodyObject(body)
        const earlier = typeof given.id === 'number' ? engine.conversion(given.id) : undefined
        const input = parseConversionInput(body, earlier)
        // A new conversion is earned on a program and channel that exist; a known one keeps its own.
        const defaults = earlier ? undefined : options.conversionDefaults?.()
        if (defaults && given.programId === undefined) input.programId = defaults.programId
        if (defaults && given.channelId === undefined) input.channelId = defaults.channelId
        const { event, deliveries } = engine.emitConversion(input)
        return ok(
          {
            event,
            deliveries: deliveries.map((delivery) => ({
              id: delivery.id,
              webhookId: delivery.webhookId,
            })),
          },
          event ? `${event.type} emitted.` : 'Status unchanged: no event.',
        )
      },
    },
    {
      method: 'POST',
      pattern: path('/emulator/clock'),
      access: 'key',
      control: true,
      body: true,
      async handle({ body }) {
        const { attempts, now } = await engine.advance(parseAdvance(body))
        return ok({ now: new Date(now).toISOString(), attempts }, 'Clock advanced.')
      },
    },
    {
      // Public: a client learns the pace of the emulator's batches before polling
      // it; the same probe against the real service is a 404 that counts nothing.
      method: 'GET',
      pattern: path('/emulator/clock'),
      access: 'public',
      control: true,
      handle: () =>
        ok({
          now: new Date(engine.clock.now()).toISOString(),
          timeScale: engine.clock.timeScale,
          batchIntervalMs: engine.rules.batchIntervalMs,
        }),
    },
    {
      method: 'GET',
      pattern: path('/emulator/log'),
      access: 'key',
      control: true,
      handle: () =>
        ok(
          engine.log().map((entry) => ({
            ...entry,
            at: iso(entry.at),
            // A state file from before batches has neither: the attempt's own time.
            dueAt: iso(entry.dueAt ?? entry.at),
            batchAt: iso(entry.batchAt ?? entry.at),
          })),
        ),
    },
  ]
}

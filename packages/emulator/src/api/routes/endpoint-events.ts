import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AttemptLogEntry, DeliveryRecord } from '../../delivery/delivery-record.js'
import type { EndpointRecord, Engine, EngineEvent } from '../../delivery/engine.js'
import { iso, path, type Route } from './route.js'
import { findEndpoint } from './webhooks.js'

/** Where an endpoint's event stream lives; `{id}` is the endpoint. `GET /emulator/clock` names it. */
export const EVENT_STREAM_PATH = '/emulator/webhooks/{id}/events'

// A comment line now and then keeps proxies from closing an idle stream.
const KEEPALIVE_MS = 15_000

/** One server-sent event; `id` lets a client that reconnects ask for what it missed. */
function sendEvent(res: ServerResponse, event: string, data: unknown, id?: number): void {
  // A check queued before the client went finds the stream closed: nothing to say.
  if (res.destroyed || res.writableEnded) return
  res.write(
    `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`,
  )
}

/** The attempt log's position the client last saw (`Last-Event-ID`), or undefined. */
function lastSeen(req: IncomingMessage, length: number): number | undefined {
  const given = req.headers['last-event-id']
  if (typeof given !== 'string' || !/^\d{1,15}$/.test(given)) return undefined
  return Math.min(Number(given), length)
}

/**
 * One attempt as the stream sends it: its delivery's identity (as
 * `GET /v1/webhooks/{id}/deliveries` lists it) with what that attempt itself
 * left: the delivery's status after it, its number in the round, the answer (the
 * receiver's outcome or error code), the next attempt's time. A reconnect replays
 * missed attempts from the log, so each keeps its own state, not the delivery's
 * current one. The answer's body is the delivery's only on its latest attempt
 * (the log keeps no body); `outcome` and `errorCode` say what each answer named.
 */
function attemptJson(
  engine: Engine,
  entry: AttemptLogEntry,
  delivery: DeliveryRecord,
  latest: boolean,
) {
  // A log from before the entries kept the status: what the rules made of the attempt.
  const lastAttempt = engine.rules.retryScheduleMs.length + 1
  const status =
    entry.status ?? (entry.ok ? 'succeeded' : entry.attempt >= lastAttempt ? 'failed' : 'retrying')
  return {
    id: delivery.id,
    webhookId: delivery.webhookId,
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    status,
    attempts: entry.attempt,
    nextAttemptAt: iso(entry.nextAttemptAt ?? null),
    createdAt: iso(delivery.createdAt),
    responseStatus: entry.responseStatus,
    responseBody: latest ? delivery.responseBody : null,
    ...(entry.outcome === undefined ? {} : { outcome: entry.outcome }),
    ...(entry.errorCode === undefined ? {} : { errorCode: entry.errorCode }),
    durationMs: entry.durationMs,
    errorMessage: entry.errorMessage,
    attemptedAt: iso(entry.at),
  }
}

/** `attempt`: the attempt at `index` of the log; its `id` is the attempt's place in the log, one past it. */
function sendAttempt(res: ServerResponse, engine: Engine, index: number, latest: boolean): void {
  const entry = engine.log()[index]
  const delivery = entry && engine.delivery(entry.webhookId, entry.deliveryId)
  if (!entry || !delivery) return
  sendEvent(res, 'attempt', attemptJson(engine, entry, delivery, latest), index + 1)
}

/**
 * Streams one endpoint's news on `res`: `ready` first (its status now), each
 * attempt to it (the ones since `Last-Event-ID` first, after a reconnect, each
 * with its own state),
 * `endpoint` when its status changes (disabled after the failure streak or by
 * a PATCH, enabled again), and `deleted` (then the end) when it goes.
 */
function openStream(engine: Engine, endpoint: EndpointRecord, req: IncomingMessage) {
  return (res: ServerResponse) => {
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
    })
    res.write('retry: 1000\n\n')
    let status = endpoint.state.status
    const log = engine.log()
    const from = lastSeen(req, log.length)
    // Its id is where the log stands: a reconnect asks for what came after.
    sendEvent(res, 'ready', { webhookId: endpoint.id, status }, from ?? log.length)
    // What came after: each delivery's last attempt here is its latest one.
    const missed: number[] = []
    for (let index = from ?? log.length; index < log.length; index++) {
      if (log[index]?.webhookId === endpoint.id) missed.push(index)
    }
    const later = new Set<string>()
    const latest = new Set<number>()
    for (const index of missed.toReversed()) {
      const deliveryId = log[index]?.deliveryId as string
      if (!later.has(deliveryId)) latest.add(index)
      later.add(deliveryId)
    }
    for (const index of missed) sendAttempt(res, engine, index, latest.has(index))
    // Checked after the event's own turn, so a disable follows the attempt that caused it.
    const checkStatus = () => {
      if (res.destroyed || res.writableEnded) return
      const now = engine.endpoint(endpoint.id)
      if (!now) {
        sendEvent(res, 'deleted', { webhookId: endpoint.id })
        return void res.end()
      }
      if (now.state.status === status) return
      status = now.state.status
      sendEvent(res, 'endpoint', {
        webhookId: endpoint.id,
        status,
        at: iso(engine.clock.now()),
      })
    }
    const unwatch = engine.watch((event: EngineEvent) => {
      if (event.kind === 'attempt' && event.entry.webhookId === endpoint.id) {
        sendAttempt(res, engine, engine.log().lastIndexOf(event.entry), true)
      }
      queueMicrotask(checkStatus)
    })
    const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS)
    keepalive.unref()
    res.on('close', () => {
      unwatch()
      clearInterval(keepalive)
    })
  }
}

/**
 * `GET /emulator/webhooks/{id}/events`: the endpoint's attempts and status
 * changes as server-sent events, as they happen. A control route: the key and
 * its `webhooks:read` scope are checked as on `/v1`, and nothing is counted
 * against the rate limit or the quota; the real service has no such route.
 */
export function createEndpointEventsRoute(engine: Engine): Route {
  return {
    method: 'GET',
    pattern: path(EVENT_STREAM_PATH),
    access: 'webhooks:read',
    control: true,
    handle({ params, req }) {
      const endpoint = findEndpoint(engine, params[0])
      return { status: 200, message: '', data: null, stream: openStream(engine, endpoint, req) }
    },
  }
}

import { readReceiverAnswer } from '@affiliate-webhooks/core/internal'
import { endpointJson } from '../api/routes/webhooks.js'
import type { AttemptLogEntry, DeliveryRecord } from '../delivery/delivery-record.js'
import { isQueued } from '../delivery/delivery-record.js'
import type { EndpointRecord, Engine } from '../delivery/engine.js'

/** Most deliveries the console's list shows at once. */
export const CONSOLE_LIST_LIMIT = 200

const iso = (ms: number | null | undefined) =>
  ms === null || ms === undefined ? null : new Date(ms).toISOString()
/** HH:MM of a service time, UTC: how the service's times read in the page's sentences. */
const clockTime = (ms: number) => `${new Date(ms).toISOString().slice(11, 16)} UTC`

const conversionIds = new WeakMap<DeliveryRecord, number | null>()

/** The conversion a delivery carries (null for `webhook.test`), read once from its body. */
function conversionIdOf(delivery: DeliveryRecord): number | null {
  let id = conversionIds.get(delivery)
  if (id === undefined) {
    try {
      const event = JSON.parse(delivery.body) as { data?: { conversion?: { id?: unknown } } }
      const value = event.data?.conversion?.id
      id = typeof value === 'number' ? value : null
    } catch {
      id = null
    }
    conversionIds.set(delivery, id)
  }
  return id
}

/** The page's header and endpoints: never a secret. */
export function overview(engine: Engine) {
  return {
    now: iso(engine.clock.now()),
    timeScale: engine.clock.timeScale,
    retryScheduleMs: engine.rules.retryScheduleMs,
    disableAfterFailures: engine.rules.disableAfterFailures,
    endpoints: engine.endpoints().map((endpoint) => endpointJson(endpoint)),
    conversions: engine.snapshot().conversions.map(({ id, status }) => ({ id, status })),
  }
}

/** The list row of a delivery. */
export function deliveryRow(delivery: DeliveryRecord) {
  return {
    id: delivery.id,
    webhookId: delivery.webhookId,
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    conversionId: conversionIdOf(delivery),
    status: delivery.status,
    attempts: delivery.made,
    attemptsTotal: delivery.attemptsTotal,
    replays: delivery.replays,
    createdAt: iso(delivery.createdAt),
    responseStatus: delivery.responseStatus,
  }
}

/** Deliveries newest first, of one endpoint or all, of one status or all. */
export function deliveryList(engine: Engine, query: URLSearchParams) {
  const webhookId = query.get('webhookId') || undefined
  const status = query.get('status') || undefined
  const all = engine
    .deliveries()
    .filter(
      (delivery) =>
        (webhookId === undefined || delivery.webhookId === webhookId) &&
        (status === undefined || delivery.status === status),
    )
  return { total: all.length, rows: all.slice(0, CONSOLE_LIST_LIMIT).map(deliveryRow) }
}

/** What the service does next with a delivery, in one sentence. */
export function nextStep(delivery: DeliveryRecord, endpoint: EndpointRecord | undefined): string {
  if (delivery.status === 'succeeded') return 'delivered: nothing more to send'
  if (delivery.status === 'failed') {
    return delivery.failedBecause === 'endpoint_disabled'
      ? 'endpoint disabled: not queued'
      : `all ${delivery.made} attempts failed: no more attempts (Replay starts a new round)`
  }
  const next = `attempt ${delivery.made + 1} at ${clockTime(delivery.nextAttemptAt ?? 0)}`
  return endpoint?.state.status === 'disabled'
    ? `endpoint disabled: not queued; marked failed when ${next} comes due`
    : next
}

/** One attempt as the delivery view draws it, with the receiver's error code when its answer names one. */
function attemptView(entry: AttemptLogEntry, answers: WeakMap<AttemptLogEntry, string | null>) {
  const answer = answers.get(entry) ?? null
  return {
    attempt: entry.attempt,
    at: iso(entry.at),
    dueAt: iso(entry.dueAt ?? entry.at),
    ok: entry.ok,
    responseStatus: entry.responseStatus,
    result: entry.result,
    errorCode: readReceiverAnswer(answer).code ?? null,
    answer,
    durationMs: entry.durationMs,
    errorMessage: entry.errorMessage,
  }
}

/**
 * A delivery opened: its attempts in rounds (a replay starts a new one), the
 * schedule they follow and the next step. `answers` holds each attempt's first
 * 500 characters, kept as the attempts were made (the log itself does not).
 */
export function deliveryDetail(
  engine: Engine,
  delivery: DeliveryRecord,
  answers: WeakMap<AttemptLogEntry, string | null>,
) {
  const rounds: ReturnType<typeof attemptView>[][] = []
  for (const entry of engine.log()) {
    if (entry.deliveryId !== delivery.id) continue
    if (entry.attempt === 1 || rounds.length === 0) rounds.push([])
    rounds.at(-1)?.push(attemptView(entry, answers))
  }
  const endpoint = engine.endpoint(delivery.webhookId)
  return {
    ...deliveryRow(delivery),
    queued: isQueued(delivery),
    nextAttemptAt: iso(delivery.nextAttemptAt),
    next: nextStep(delivery, endpoint),
    endpointUrl: endpoint?.url ?? null,
    rounds,
  }
}

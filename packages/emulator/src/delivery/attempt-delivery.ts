import { readReceiverAnswer } from '@affiliate-webhooks/core/internal'
import type { Clock } from '../shared/clock.js'
import { type AttemptLogEntry, type DeliveryRecord, settleAttempt } from './delivery-record.js'
import { type EndpointState, recordFailure, recordSuccess } from './endpoint-state.js'
import { type Agents, type AttemptResult, sendAttempt } from './http-request.js'
import type { DeliveryRules } from './schedule.js'
import { deliveryHeaders } from './signing.js'

/** The endpoint an attempt goes to: where, signed with what, and its state. */
export interface AttemptTarget {
  id: string
  url: string
  secret: string
  state: EndpointState
}

/** What the engine's `onAttempt` learns beyond the log entry. */
export interface AttemptDetail {
  /** Where it was sent (the endpoint's URL, or what `targetUrl` picked). */
  url: string
  /** The `Service-Signature` sent. */
  signature: string
  /** 1 for the first attempt the engine sent, 2 for the next: the order they went out. */
  sequence: number
  /** 0 for the first round of attempts, n for the n-th replay. */
  round: number
  /** The HTTP exchange as it went. */
  result: AttemptResult
  /** This failure disabled the endpoint. */
  disabledEndpoint: boolean
}

/** What every attempt shares: the clock, the rules, the connections. */
export interface AttemptContext {
  clock: Clock
  rules: DeliveryRules
  timeoutMs: number
  agents: Agents
  /** Extra request headers. */
  headers: Readonly<Record<string, string>> | undefined
  /** Where an attempt to this endpoint goes; default its URL. */
  targetUrl: ((endpoint: AttemptTarget) => string) | undefined
  /** False once the delivery was deleted or the engine closed while the attempt was out. */
  live: (delivery: DeliveryRecord) => boolean
}

/** `200`, `timeout` or `connection_error`, as the attempt log shows it. */
const resultText = (result: AttemptResult): string =>
  result.errorKind ??
  (result.responseStatus === undefined ? 'connection_error' : String(result.responseStatus))

/**
 * One attempt of a delivery: signed now with the secret of now (a rotation applies
 * to queued deliveries at once), sent, and its outcome applied to the delivery
 * and to the endpoint's failure streak. Undefined when it was not kept (deleted, closed).
 */
export async function attemptDelivery(
  context: AttemptContext,
  endpoint: AttemptTarget,
  delivery: DeliveryRecord,
  batchAt: number,
  sequence: number,
): Promise<{ entry: AttemptLogEntry; detail: AttemptDetail } | undefined> {
  const { clock, rules } = context
  const dueAt = delivery.nextAttemptAt as number
  delivery.made++
  delivery.attemptsTotal++
  const attempt = delivery.made
  const at = clock.now()
  const url = context.targetUrl?.(endpoint) ?? endpoint.url
  const headers = await deliveryHeaders({
    secret: endpoint.secret,
    body: delivery.body,
    attempt,
    eventId: delivery.eventId,
    ...(context.headers ? { extra: context.headers } : {}),
  })
  const { timeoutMs, agents } = context
  const result = await sendAttempt({ url, headers, body: delivery.body, timeoutMs, agents })
  if (!context.live(delivery)) return undefined
  const ended = clock.now()
  let disabledEndpoint = false
  if (result.ok) recordSuccess(endpoint.state, ended)
  else disabledEndpoint = recordFailure(endpoint.state, ended, rules.disableAfterFailures)
  // "Offsets after the previous attempt": from when it was sent; the batch after that sends it.
  settleAttempt(delivery, result.ok, at, rules.retryScheduleMs)
  delivery.responseStatus = result.responseStatus ?? null
  delivery.responseBody = result.responseBody ?? null
  delivery.durationMs = Math.round(result.durationMs)
  delivery.errorMessage = result.errorMessage ?? null
  const answer = readReceiverAnswer(delivery.responseBody)
  const entry: AttemptLogEntry = {
    at,
    dueAt,
    batchAt,
    webhookId: endpoint.id,
    deliveryId: delivery.id,
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    attempt,
    ok: result.ok,
    responseStatus: result.responseStatus ?? null,
    result: resultText(result),
    durationMs: delivery.durationMs,
    errorMessage: delivery.errorMessage,
    errorCode: answer.code ?? null,
    outcome: answer.outcome ?? null,
    status: delivery.status,
    nextAttemptAt: delivery.nextAttemptAt ?? null,
  }
  const signature = headers['Service-Signature'] as string
  const round = delivery.replays
  return { entry, detail: { url, signature, sequence, round, result, disabledEndpoint } }
}

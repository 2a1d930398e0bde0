import type { Delivery, WebhookEndpoint } from '@affiliate-webhooks/client'
import { type Acknowledgement, acknowledgementOf } from '@affiliate-webhooks/client/internal'
import {
  SERVICE_DISABLES_AFTER as DISABLE_AFTER,
  rawBodyFixOf,
  readReceiverAnswer,
} from '@affiliate-webhooks/core/internal'

/** One thing `doctor` found, in words, with the command that fixes it. */
export interface HealthFinding {
  level: 'ok' | 'warning' | 'problem'
  title: string
  detail: string
  fix?: string
}

/** What a receiver's answer (or its absence) says about the receiver. */
interface Cause {
  key: string
  title: string
  detail: string
  fix: string
}

/** A held event (500 event_held): a statement of the handler committed the mark itself. */
const HELD_CAUSE: Cause = {
  key: 'event_held',
  title: '500 event_held: the store holds an event its handler committed itself',
  detail:
    "A statement the handler sent through ctx.tx (a COMMIT inside a procedure or a compound statement, SET autocommit, DDL) made the event's handled mark durable without the rest of the handler, so its effects may be partial. The store (MySQL, MariaDB, SQLite) answers every delivery of it, and of the newer events of its conversion, 500 until it is resolved; the service keeps retrying.",
  fix: 'list them with npx @affiliate-webhooks/cli sql held --database <url>, check what the handler kept, then npx @affiliate-webhooks/cli sql resolve <event id> --rerun (the handler runs again) or --accept (taken as applied), and stop the handler from committing on ctx.tx',
}

/** What one of this library's error codes in the answer says went wrong. */
function causeOfCode(
  code: string,
  status: number,
  id: string,
  adapter?: string,
): Cause | undefined {
  switch (code) {
    case 'signature_mismatch':
      return {
        key: code,
        title: '401 signature_mismatch: the secret or the body is not the one the service signed',
        detail:
          'Either the receiver has another secret (a rotation not deployed, the whsec_ prefix cut off) or something re-encoded the body on the way (a JSON body parser before the webhook, a proxy or API gateway).',
        fix: `a secret kept in the receiver's environment (AFFILIATE_WEBHOOK_SECRET): the service shows it only when it is made, so get a new one with affiliate-webhooks rotate ${id} --show-secret, set it there and redeploy; a receiver reading secrets from Redis (redisSecretSource): affiliate-webhooks rotate ${id} --redis <url>, with no downtime. To see what reaches you: affiliate-webhooks listen --save, then verify --from`,
      }
    case 'timestamp_outside_tolerance':
      return {
        key: code,
        title: "401 timestamp_outside_tolerance: the receiver's clock is off",
        detail:
          "The signature time is more than the tolerance (5 minutes) from the receiver's clock.",
        fix: 'sync the server clock (NTP)',
      }
    case 'event_in_progress':
      return {
        key: code,
        title: '409 event_in_progress: still in flight',
        detail:
          'Another attempt of the same event was still running. Harmless once in a while (the retry finds it done); often means handlers take longer than the service waits.',
        fix: 'if it persists, hand slow work to a queue (`queue: bullmqHandoff(...)`)',
      }
    case 'handler_failed':
      return {
        key: code,
        title: '500 handler_failed: your handler threw',
        detail:
          'The receiver verified the event and your code threw; the receiver logs each one with its event id and stack.',
        fix: "look for these event ids in the receiver's log",
      }
    case 'event_held':
      return HELD_CAUSE
    case 'store_unavailable':
      return {
        key: code,
        title: '503 store_unavailable: the receiver could not reach its store (Redis)',
        detail:
          'De-duplication state was unreachable, so the receiver refused rather than risk a double run.',
        fix: "check Redis and the receiver's REDIS_URL",
      }
    case 'raw_body_unavailable':
      return {
        // One cause per stack: two stacks that lost the body are two fixes.
        key: adapter === undefined ? code : `${code}:${adapter}`,
        title: `500 raw_body_unavailable: something read the body before the webhook${adapter ? ` (${adapter} adapter)` : ''}`,
        detail:
          'The exact bytes were consumed, held or never delivered to the webhook handler, so nothing can be verified; the receiver answered at once rather than wait.',
        fix:
          rawBodyFixOf(adapter) ??
          'let the webhook read the body first, or keep its exact bytes (the error message in the response body names the fix for your framework)',
      }
    case 'handler_timeout':
      return {
        key: code,
        title: '503 handler_timeout: the handler ran past answerWithinMs',
        detail:
          'The handler was still running 8 s (answerWithinMs) into the delivery; it went on with the event leased, and a retry after it returned was answered duplicate.',
        fix: 'make the handler faster, or hand events to a queue (docs/slow-handlers.md)',
      }
    case 'body_timeout':
      return {
        key: code,
        title: '408 body_timeout: the body arrived too slowly',
        detail:
          'The whole body had not reached the receiver bodyTimeoutMs (5 s) after the request started; the service sends it in one go, so something in between is slow. When no byte arrived at all (the answer says so), the likelier cause is in your app: something before the webhook read the body, which a fetch handler cannot tell from a silent client.',
        fix: 'if the answer says no byte arrived: read the body only in the webhook, or a request.clone() elsewhere (Nuxt/Nitro: mount the route with @affiliate-webhooks/h3, which sees a read body and answers 500 at once); otherwise check the proxy or gateway in front of the receiver; raise bodyTimeoutMs only while it stays under 10 s',
      }
    case 'payload_too_large':
      return {
        key: code,
        title: '413 payload_too_large',
        detail: "The body was larger than the receiver's maxBodyBytes.",
        fix: "raise maxBodyBytes to at least the service's 1 MB",
      }
    case 'missing_signature':
    case 'malformed_signature':
    case 'event_id_mismatch':
    case 'malformed_json':
    case 'invalid_payload':
      return {
        key: code,
        title: `${status} ${code}: the request was changed on the way`,
        detail:
          'Headers or body did not arrive as the service sent them: a proxy, gateway or middleware altered them.',
        fix: 'capture a delivery with affiliate-webhooks listen --save and diagnose it with verify --from',
      }
  }
  return undefined
}

/** Reads one failed attempt: which way the receiver went wrong. */
export function causeOf(delivery: Delivery, id: string): Cause {
  const status = delivery.responseStatus
  const { code, adapter } = readReceiverAnswer(delivery.responseBody)
  const error = delivery.errorMessage ?? ''
  if (status === null || status === undefined || status === 0) {
    if (/time|10 ?s|10000/i.test(error)) {
      return {
        key: 'timeout',
        title: 'answers slower than 10 s',
        detail:
          'The service gives up after 10 seconds and counts the attempt as failed, even if your handler finishes later. A handler that calls a slow CRM, sends mail or waits on a busy database does this.',
        fix: 'hand slow work to a queue: the `queue: bullmqHandoff(...)` option answers at once and runs the handler in a worker',
      }
    }
    return {
      key: 'unreachable',
      title: `no answer at all (${error || 'connection failed'})`,
      detail:
        'The service could not reach the URL: a wrong host or port, DNS, TLS, a firewall or a server that is down.',
      fix: `check the URL (affiliate-webhooks endpoints get ${id}) and that the server is up and reachable from the internet`,
    }
  }
  if (status >= 300 && status < 400) {
    return {
      key: 'redirect',
      title: `redirects (${status})`,
      detail:
        'The service does not follow redirects: a 3xx is a failure. Often http -> https or a missing or extra trailing slash.',
      fix: `register the final URL: affiliate-webhooks endpoints update ${id} --url <final url>`,
    }
  }
  const known = code === undefined ? undefined : causeOfCode(code, status, id, adapter)
  if (known) return known
  if (status === 404 || status === 405) {
    return {
      key: `http_${status}`,
      title: `${status}: no webhook handler at this URL`,
      detail: 'The server answered, but nothing handles POST at this path.',
      fix: `check the path: affiliate-webhooks endpoints get ${id}`,
    }
  }
  return {
    key: `http_${status}`,
    title: `${status} without this library's error code`,
    detail:
      'Something other than the webhook handler answered: a proxy, a load balancer, a gateway, or a server error before the handler ran.',
    fix: 'look at the response bodies below and at the logs of whatever sits in front of the receiver',
  }
}

/** The 2xx a failed delivery last had, when it had one: its event was acknowledged. */
const answeredOk = (delivery: Delivery) => {
  const acknowledgement = acknowledgementOf(delivery)
  return acknowledgement?.by === 'answer' ? acknowledgement : undefined
}

/**
 * True for a delivery whose latest answer was a failure. A failed delivery whose
 * latest answer is a 2xx failed unsent (a replay that came due while the endpoint
 * was disabled): that answer is the receiver's acknowledgement, no failure of it.
 */
const failedAttempt = (delivery: Delivery) =>
  !answeredOk(delivery) &&
  (delivery.status === 'failed' ||
    delivery.status === 'retrying' ||
    (delivery.responseStatus !== null &&
      delivery.responseStatus !== undefined &&
      (delivery.responseStatus < 200 || delivery.responseStatus >= 300) &&
      delivery.status !== 'succeeded'))

/**
 * `doctor`: the endpoint's health (a signature's is core's `diagnoseSignature`).
 * Explains in words what is wrong with an endpoint, from the endpoint and its
 * recent deliveries (newest first), and which command fixes each thing.
 */
export function checkEndpointHealth(
  endpoint: WebhookEndpoint,
  deliveries: readonly Delivery[],
  options: { maxAttempts: number },
): HealthFinding[] {
  const findings: HealthFinding[] = []
  const id = endpoint.id
  if (endpoint.status === 'disabled') {
    findings.push({
      level: 'problem',
      title: `disabled${endpoint.disabledAt ? ` since ${endpoint.disabledAt}` : ''}`,
      detail:
        endpoint.consecutiveFailures >= DISABLE_AFTER
          ? `The service disabled it after ${DISABLE_AFTER} failed attempts in a row. While disabled it queues nothing: events from that time are not delivered, ever.`
          : 'It was disabled (by hand, or after a failure streak). While disabled the service queues nothing.',
      fix: `after fixing the cause below: affiliate-webhooks recover ${id} (re-enables, replays the failed deliveries, names the window to reconcile from reports)`,
    })
  } else if (endpoint.consecutiveFailures > 0) {
    const left = DISABLE_AFTER - endpoint.consecutiveFailures
    findings.push({
      level: endpoint.consecutiveFailures >= 10 ? 'problem' : 'warning',
      title: `${endpoint.consecutiveFailures} failed attempts in a row`,
      detail: `The service disables the endpoint at ${DISABLE_AFTER}; ${left > 0 ? `${left} more` : 'any further'} failure${left === 1 ? '' : 's'} and it stops queueing events.`,
    })
  }

  const failing = deliveries.filter(failedAttempt)
  const causes = new Map<string, { cause: Cause; deliveries: Delivery[] }>()
  for (const delivery of failing) {
    const cause = causeOf(delivery, id)
    const entry = causes.get(cause.key) ?? { cause, deliveries: [] }
    entry.deliveries.push(delivery)
    causes.set(cause.key, entry)
  }
  for (const { cause, deliveries: hit } of [...causes.values()].sort(
    (a, b) => b.deliveries.length - a.deliveries.length,
  )) {
    const events = hit
      .slice(0, 3)
      .map((d) => d.eventId ?? d.id)
      .join(', ')
    const body = hit.find((d) => d.responseBody)?.responseBody
    findings.push({
      level: 'problem',
      title: `${hit.length} deliver${hit.length === 1 ? 'y' : 'ies'}: ${cause.title}`,
      detail: `${cause.detail} (e.g. ${events}${hit.length > 3 ? ', ...' : ''})${body ? `\n  answered: ${body.slice(0, 200)}` : ''}`,
      fix: cause.fix,
    })
  }

  findings.push(...failedForGood(deliveries, id, options.maxAttempts))
  if (findings.length === 0) {
    findings.push({
      level: 'ok',
      title: 'healthy',
      detail: `Active, no failed attempts in a row${endpoint.lastDeliveryAt ? `; last successful delivery ${endpoint.lastDeliveryAt}` : ''}${deliveries.length === 0 ? '; no deliveries yet (affiliate-webhooks test <id> --wait sends one)' : ''}.`,
    })
  }
  return findings
}

const deliveriesText = (n: number) => `${n} deliver${n === 1 ? 'y' : 'ies'}`

/**
 * Deliveries the service will not try again by itself, told apart by why: all
 * eight attempts failed, or the endpoint was disabled before the eighth (the
 * service fails what is still queued as it comes due).
 */
function failedForGood(
  deliveries: readonly Delivery[],
  id: string,
  maxAttempts: number,
): HealthFinding[] {
  const allFailed = deliveries.filter((d) => d.status === 'failed')
  const acknowledged = allFailed.flatMap((d) => {
    const answer = answeredOk(d)
    return answer ? [{ delivery: d, answer }] : []
  })
  const failed = allFailed.filter((d) => !answeredOk(d))
  const exhausted = failed.filter((d) => (d.attempts ?? maxAttempts) >= maxAttempts).length
  const cutShort = failed.length - exhausted
  const fix = `once the receiver answers 2xx: affiliate-webhooks replay ${id} --failed`
  const findings: HealthFinding[] = []
  if (acknowledged.length > 0) findings.push(acknowledgedFinding(acknowledged))
  if (exhausted > 0) {
    findings.push({
      level: 'warning',
      title: `${deliveriesText(exhausted)} failed after all ${maxAttempts} attempts`,
      detail: 'The service will not try these again by itself.',
      fix,
    })
  }
  if (cutShort > 0) {
    findings.push({
      level: 'warning',
      title: `${deliveriesText(cutShort)} failed because the endpoint was disabled (fewer than ${maxAttempts} attempts)`,
      detail:
        'Still queued when the endpoint was disabled, they were marked failed as they came due; the service will not try them again by itself.',
      fix,
    })
  }
  return findings
}

/**
 * Failed deliveries whose last answer is a 2xx: the receiver acknowledged their
 * events, then a replay came due while the endpoint was disabled and was marked
 * failed without being sent. Nothing is wrong with the receiver.
 */
function acknowledgedFinding(
  hit: { delivery: Delivery; answer: Extract<Acknowledgement, { by: 'answer' }> }[],
): HealthFinding {
  const answers = new Map<string, number>()
  for (const { answer } of hit) {
    const said = `${answer.responseStatus}${answer.outcome ? ` ${answer.outcome}` : ''}`
    answers.set(said, (answers.get(said) ?? 0) + 1)
  }
  const ours = hit.every(({ answer }) => answer.outcome !== null)
  const events = hit
    .slice(0, 3)
    .map(({ delivery }) => delivery.eventId ?? delivery.id)
    .join(', ')
  return {
    level: 'ok',
    title: `${deliveriesText(hit.length)} failed unsent after the receiver had acknowledged ${hit.length === 1 ? 'its event' : 'their events'}`,
    detail: `The receiver answered ${[...answers].map(([said, n]) => `${said} x ${n}`).join(', ')}${ours ? " (this library's answer)" : ''}; each was replayed after that, and the replay came due while the endpoint was disabled, so the service marked it failed without sending it. Nothing to fix; recover leaves them (e.g. ${events}${hit.length > 3 ? ', ...' : ''}).`,
  }
}

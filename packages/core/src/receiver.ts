import { createDeliveryLog, type Logger, resolveLogger } from './delivery-log.js'
import { isWebhookError, WebhookError, type WebhookErrorCode } from './errors.js'
import { memoryStore } from './memory-store.js'
import { handOff, type QueueHandoff } from './queue.js'
import {
  type BeginResult,
  type Claim,
  type EventStore,
  isPromiseLike,
  type MaybePromise,
  resolveStoreTimings,
} from './store.js'
import type {
  AnyWebhookEvent,
  Conversion,
  ConversionCreatedEvent,
  ConversionEvent,
  ConversionUpdatedEvent,
  UnknownWebhookEvent,
  WebhookTestEvent,
} from './types.js'
import {
  type DeliveryInput,
  resolveVerifySettings,
  type VerifiedDelivery,
  type VerifyOptions,
  verifyDelivery,
} from './verify.js'

/** What happened to a delivery. */
export type Outcome =
  /** The handler ran and returned: 200. */
  | 'processed'
  /** This event id was handled before: 200, handler not called. */
  | 'duplicate'
  /** A newer event of the same conversion was handled: 200, handler not called. */
  | 'stale'
  /** No handler is configured for this event type: 200. */
  | 'ignored'
  /** Handed to the `queue` option's queue, which holds it durably: 200. */
  | 'queued'
  /** Another attempt of this event is running: 409, the service retries. */
  | 'in_progress'
  /** Refused before the handler: bad size, signature, timestamp, JSON or envelope (4xx). */
  | 'rejected'
  /** The handler threw or the store failed: 5xx, the service retries. */
  | 'failed'

/** The answer to one delivery: what to send back, and what happened. */
export interface ReceiveResult {
  status: number
  /** Small JSON text to send back; the service keeps its first 500 characters. */
  body: string
  /** Headers to send with the answer. */
  headers: Readonly<Record<string, string>>
  outcome: Outcome
  /** The verified event, once it got that far. */
  event?: AnyWebhookEvent
  /** Why the delivery was not acknowledged. */
  error?: WebhookError
}

/** Facts about the delivery, handed to every handler beside the event. */
export interface HandlerContext {
  eventId: string
  /** `Service-Delivery-Attempt` (1 to 8), or null when absent. */
  attempt: number | null
  /** The signature's `t`, seconds since the epoch. */
  signedAt: number
}

type Handler<E> = (event: E, ctx: HandlerContext) => unknown

/** Handlers for the event types the spec defines. */
export interface EventHandlers {
  'conversion.created'?: Handler<ConversionCreatedEvent> | undefined
  'conversion.updated'?: Handler<ConversionUpdatedEvent> | undefined
  'webhook.test'?: Handler<WebhookTestEvent> | undefined
}

/** Options of {@link createReceiver} and of every adapter's `affiliateWebhook`. */
export interface ReceiverOptions extends VerifyOptions {
  /** Called for conversion.created and conversion.updated unless `on` has that type. */
  onConversion?:
    | ((conversion: Conversion, event: ConversionEvent, ctx: HandlerContext) => unknown)
    | undefined
  /** One handler per event type; wins over `onConversion` for its type. */
  on?: EventHandlers | undefined
  /** Called for event types this version does not know; without it they are `ignored`. */
  onUnknownEvent?: Handler<UnknownWebhookEvent> | undefined
  /**
   * De-duplication and ordering state. Default: a new {@link memoryStore}; with
   * `queue`, none unless given (then pass the workers' store, so events they
   * handled long ago are answered `duplicate` without a new job).
   */
  store?: EventStore | undefined
  /**
   * Hand verified events to a queue and answer 200 `queued` once it holds them;
   * workers run the handlers (`@affiliate-webhooks/bullmq`). Handlers given here
   * are then not called.
   */
  queue?: QueueHandoff | undefined
  /**
   * How long one attempt holds its event before a retry may take over, ms.
   * Default: the store's own (30 s).
   */
  leaseMs?: number | undefined
  /**
   * Where to report deliveries not acknowledged (one line each: status, code,
   * event id; a handler's exception with its stack) and setup mistakes.
   * `console` by default; pino fits too; `false` silences it.
   */
  logger?: Logger | false | undefined
  /** Every delivery not acknowledged with 2xx. Observes only; never changes the answer. */
  onError?: ((error: WebhookError, event: AnyWebhookEvent | undefined) => void) | undefined
  /** A delivery of an event already handled. Observes only. */
  onDuplicate?: ((event: AnyWebhookEvent, ctx: HandlerContext) => void) | undefined
  /** An event older than one already handled for its conversion. Observes only. */
  onStale?: ((event: AnyWebhookEvent, ctx: HandlerContext) => void) | undefined
}

/** What {@link createReceiver} returns; adapters call it. */
export interface Receiver {
  /** Runs the whole pipeline for one delivery. Never rejects. */
  receive(input: DeliveryInput): Promise<ReceiveResult>
  /** The answer for a delivery an adapter refuses before the pipeline (405, 413 while reading...). */
  reject(code: WebhookErrorCode, message?: string | undefined): ReceiveResult
  /** Adapters stop reading a body past this many bytes. */
  readonly maxBodyBytes: number
  /** The `logger` option resolved (undefined for `false`), for an adapter's setup mistakes. */
  readonly logger: Logger | undefined
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' } as const

const okBody = (outcome: Outcome) => JSON.stringify({ received: true, outcome })
const BODIES = {
  processed: okBody('processed'),
  duplicate: okBody('duplicate'),
  stale: okBody('stale'),
  ignored: okBody('ignored'),
  queued: okBody('queued'),
}

// A literal per answer: cheaper than spreading a template on every request.
const ok = (outcome: keyof typeof BODIES, event: AnyWebhookEvent): ReceiveResult => ({
  status: 200,
  body: BODIES[outcome],
  headers: JSON_HEADERS,
  outcome,
  event,
})

const DEFAULT_MESSAGES: Partial<Record<WebhookErrorCode, string>> = {
  method_not_allowed: 'Webhook deliveries are POST requests.',
  not_found: 'No webhook endpoint at this path.',
  payload_too_large: 'The body is larger than the limit.',
  event_in_progress: 'Another attempt of this event is being handled; retry later.',
  handler_failed: 'The event handler failed; the delivery will be retried.',
  store_unavailable: 'The de-duplication store is unreachable; the delivery will be retried.',
  internal_error: 'The receiver failed unexpectedly; the delivery will be retried.',
}

/** Keeps every body inside the 500 characters the service stores; the code comes first. */
const MAX_MESSAGE = 300
const clip = (message: string) =>
  message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE - 1)}…` : message

function errorResult(error: WebhookError, event?: AnyWebhookEvent): ReceiveResult {
  const headers: Record<string, string> = { ...JSON_HEADERS }
  if (error.code === 'method_not_allowed') headers.allow = 'POST'
  // Refusing a large body means not reading the rest, so the connection cannot be reused.
  if (error.code === 'payload_too_large') headers.connection = 'close'
  const result: ReceiveResult = {
    status: error.status,
    body: JSON.stringify({ error: { code: error.code, message: clip(error.message) } }),
    headers,
    outcome: error.status === 409 ? 'in_progress' : error.status >= 500 ? 'failed' : 'rejected',
    error,
  }
  if (event !== undefined) result.event = event
  return result
}

/** A handler of any event type, as {@link handlerTable} holds them. */
export type AnyHandler = (event: AnyWebhookEvent, ctx: HandlerContext) => unknown

/**
 * Which handler runs for each known event type, from `onConversion` and `on`
 * (`on` wins for its type). Shared with queue workers, so both decide alike.
 */
export function handlerTable(options: ReceiverOptions): Map<string, AnyHandler> {
  const table = new Map<string, AnyHandler>()
  const { onConversion, on = {} } = options
  const viaConversion = onConversion
    ? (event: AnyWebhookEvent, ctx: HandlerContext) => {
        const conversionEvent = event as ConversionEvent
        return onConversion(conversionEvent.data.conversion, conversionEvent, ctx)
      }
    : undefined
  for (const type of ['conversion.created', 'conversion.updated', 'webhook.test'] as const) {
    const handler =
      (on[type] as AnyHandler | undefined) ?? (type === 'webhook.test' ? undefined : viaConversion)
    if (handler) table.set(type, handler)
  }
  return table
}

/** Calls an observation hook; whatever it does, the answer stays the same. */
function observe<A extends unknown[]>(hook: ((...args: A) => void) | undefined, ...args: A) {
  if (hook === undefined) return
  try {
    const returned: unknown = hook(...args)
    if (isPromiseLike(returned)) Promise.resolve(returned).catch(() => {})
  } catch {
    // Observers must not turn a handled event into a failure.
  }
}

/**
 * The framework-neutral receiver: verify, parse, de-duplicate, order, dispatch,
 * and decide the HTTP answer. Adapters only move bytes in and the answer out.
 */
export function createReceiver(options: ReceiverOptions): Receiver {
  const settings = resolveVerifySettings(options, 'createReceiver')
  const store = options.store ?? memoryStore()
  const { leaseMs, queue } = options
  // Checked here, once: stores trust the lease the receiver hands them.
  if (leaseMs !== undefined) resolveStoreTimings({ leaseMs }, 'createReceiver')
  const handlers = handlerTable(options)
  if (handlers.size === 0 && options.onUnknownEvent === undefined && queue === undefined) {
    // Every event would be answered 200 ignored and lost: almost surely a typo.
    throw new TypeError(
      'createReceiver: no handler given; pass onConversion, on: { ... } or onUnknownEvent.',
    )
  }
  const { onUnknownEvent, onError, onDuplicate, onStale } = options
  const logger = resolveLogger(options.logger, 'createReceiver')
  const log = logger && createDeliveryLog(logger)
  // Only answers that are not 2xx are logged; with `logger: false` nothing is added.
  const settle = log
    ? (result: ReceiveResult, input: DeliveryInput) => {
        if (result.status >= 300) {
          try {
            log(result, input)
          } catch {
            // A logger that throws must not change the answer.
          }
        }
        return result
      }
    : (result: ReceiveResult) => result
  const known = new Set(['conversion.created', 'conversion.updated', 'webhook.test'])

  const fail = (error: WebhookError, event?: AnyWebhookEvent): ReceiveResult => {
    observe(onError, error, event)
    return errorResult(error, event)
  }
  const storeFailed = (cause: unknown, event: AnyWebhookEvent) =>
    fail(
      new WebhookError('store_unavailable', DEFAULT_MESSAGES.store_unavailable as string, {
        cause,
      }),
      event,
    )

  const handlerFailed = (
    claim: Claim,
    cause: unknown,
    event: AnyWebhookEvent,
  ): MaybePromise<ReceiveResult> => {
    const failed = () =>
      fail(
        new WebhookError('handler_failed', DEFAULT_MESSAGES.handler_failed as string, { cause }),
        event,
      )
    // The lease runs out on its own before the service's first retry, so a failed
    // release changes nothing the retry would notice.
    try {
      const released = store.release(claim)
      return isPromiseLike(released) ? Promise.resolve(released).then(failed, failed) : failed()
    } catch {
      return failed()
    }
  }

  const commit = (claim: Claim, event: AnyWebhookEvent): MaybePromise<ReceiveResult> => {
    // Handled but not recorded answers 503: a retry may run the handler again,
    // which beats telling the service to stop for an event we could not mark.
    try {
      const committed = store.commit(claim)
      return isPromiseLike(committed)
        ? Promise.resolve(committed).then(
            () => ok('processed', event),
            (cause) => storeFailed(cause, event),
          )
        : ok('processed', event)
    } catch (cause) {
      return storeFailed(cause, event)
    }
  }

  const dispatch = (
    begun: BeginResult,
    handler: AnyHandler,
    event: AnyWebhookEvent,
    ctx: HandlerContext,
  ): MaybePromise<ReceiveResult> => {
    switch (begun.status) {
      case 'duplicate':
        observe(onDuplicate, event, ctx)
        return ok('duplicate', event)
      case 'stale':
        observe(onStale, event, ctx)
        return ok('stale', event)
      case 'in_progress':
        return fail(
          new WebhookError('event_in_progress', DEFAULT_MESSAGES.event_in_progress as string),
          event,
        )
    }
    const { claim } = begun
    let returned: unknown
    try {
      returned = handler(event, ctx)
    } catch (cause) {
      return handlerFailed(claim, cause, event)
    }
    return isPromiseLike(returned)
      ? Promise.resolve(returned).then(
          () => commit(claim, event),
          (cause) => handlerFailed(claim, cause, event),
        )
      : commit(claim, event)
  }

  const queued = (queue: QueueHandoff, delivery: VerifiedDelivery) =>
    handOff(queue, options.store, delivery).then((result) => {
      if (result.outcome === undefined) return fail(result.error, delivery.event)
      const { event, attempt, signedAt } = delivery
      const ctx: HandlerContext = { eventId: event.id, attempt, signedAt }
      if (result.outcome === 'duplicate') observe(onDuplicate, event, ctx)
      if (result.outcome === 'stale') observe(onStale, event, ctx)
      return ok(result.outcome, event)
    })

  const afterVerify = (delivery: VerifiedDelivery): MaybePromise<ReceiveResult> => {
    if (queue !== undefined) return queued(queue, delivery)
    const { event, signedAt, attempt, order, conversionId } = delivery
    const handler =
      handlers.get(event.type) ??
      (known.has(event.type) ? undefined : (onUnknownEvent as AnyHandler | undefined))
    if (handler === undefined) return ok('ignored', event)
    const ctx: HandlerContext = { eventId: event.id, attempt, signedAt }
    let begun: MaybePromise<BeginResult>
    try {
      begun = store.begin({ eventId: event.id, conversionId, createdAt: order, leaseMs })
    } catch (cause) {
      return storeFailed(cause, event)
    }
    return isPromiseLike(begun)
      ? Promise.resolve(begun).then(
          (result) => dispatch(result, handler, event, ctx),
          (cause) => storeFailed(cause, event),
        )
      : dispatch(begun, handler, event, ctx)
  }

  const unexpected = (error: unknown): ReceiveResult =>
    isWebhookError(error)
      ? fail(error)
      : fail(
          new WebhookError('internal_error', DEFAULT_MESSAGES.internal_error as string, {
            cause: error,
          }),
        )

  return {
    maxBodyBytes: settings.maxBodyBytes,
    logger,
    // A chain rather than async/await, so that a synchronous store and handler
    // cost no promise per step: only the final answer is one.
    receive(input) {
      try {
        const delivery = verifyDelivery(input, settings)
        const result = isPromiseLike(delivery) ? delivery.then(afterVerify) : afterVerify(delivery)
        return isPromiseLike(result)
          ? result.then(
              (answer) => settle(answer, input),
              (error) => settle(unexpected(error), input),
            )
          : Promise.resolve(settle(result, input))
      } catch (error) {
        return Promise.resolve(settle(unexpected(error), input))
      }
    },
    reject(code, message) {
      return fail(new WebhookError(code, message ?? DEFAULT_MESSAGES[code] ?? code))
    },
  }
}

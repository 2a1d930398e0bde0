import { isWebhookError, rowOf, WebhookError, type WebhookErrorCode } from '../errors.js'
import {
  type AnyWebhookEvent,
  type Conversion,
  type ConversionCreatedEvent,
  type ConversionEvent,
  type ConversionUpdatedEvent,
  EVENT_TYPES,
  type UnknownWebhookEvent,
  type WebhookTestEvent,
} from '../events/event-types.js'
import { acknowledge, type Outcome, type ReceiveResult, refuse } from '../http/answer.js'
import type { HeadersInput } from '../http/headers.js'
import { platform } from '../platform/index.js'
import {
  type DeliveryInput,
  resolveVerifySettings,
  type VerifiedDelivery,
  type VerifyOptions,
  type VerifySettings,
  verifyDelivery,
} from '../signature/verify.js'
import {
  type BeginResult,
  type Claim,
  type EventStore,
  type FailureStreak,
  isPromiseLike,
  type MaybePromise,
  resolveStoreTimings,
} from '../store/event-store.js'
import { localFailureStreak, memoryStore } from '../store/memory-store.js'
import { createDeliveryLog, type Logger, resolveLogger } from '../telemetry/delivery-log.js'
import { failureStreakWarning } from '../telemetry/failure-streak.js'
import { type DeliveryTrace, otelApiOf, ReceiverTelemetry } from '../telemetry/otel-telemetry.js'
import { handOff, type QueueHandoff } from './queue-handoff.js'

export type { Outcome, ReceiveResult }

/**
 * Facts about the delivery, handed to every handler beside the event. `Tx` is
 * the store's transaction type: undefined for the memory and Redis stores.
 */
export interface HandlerContext<Tx = undefined> {
  eventId: string
  /** `Service-Delivery-Attempt` (1 to 8), or null when absent. */
  attempt: number | null
  /** The signature's `t`, seconds since the epoch. */
  signedAt: number
  /**
   * The transaction that also records this event as handled, from a store that
   * shares the handler's database (`postgresStore`, `mysqlStore`): write the
   * event's effects through it and they commit together with the mark, or not
   * at all. Undefined with stores that keep their state elsewhere.
   */
  tx: Tx
}

type Handler<E, Tx = undefined> = (event: E, ctx: HandlerContext<Tx>) => unknown

/** Handlers for the event types the spec defines. */
export interface EventHandlers<Tx = undefined> {
  'conversion.created'?: Handler<ConversionCreatedEvent, Tx> | undefined
  'conversion.updated'?: Handler<ConversionUpdatedEvent, Tx> | undefined
  'webhook.test'?: Handler<WebhookTestEvent, Tx> | undefined
}

/**
 * Options of {@link createReceiver} and of every adapter's `affiliateWebhook`.
 * `Tx` is inferred from `store`: handlers of a store with transactions get them
 * typed as `ctx.tx`.
 */
export interface ReceiverOptions<Tx = undefined> extends VerifyOptions {
  /** Called for conversion.created and conversion.updated unless `on` has that type. */
  onConversion?:
    | ((conversion: Conversion, event: ConversionEvent, ctx: HandlerContext<Tx>) => unknown)
    | undefined
  /** One handler per event type; wins over `onConversion` for its type. */
  on?: EventHandlers<Tx> | undefined
  /** Called for event types this version does not know; without it they are `ignored`. */
  onUnknownEvent?: Handler<UnknownWebhookEvent, Tx> | undefined
  /**
   * De-duplication and ordering state. Default: a new {@link memoryStore}; with
   * `queue`, none unless given (then pass the workers' store, so events they
   * handled long ago are answered `duplicate` without a new job).
   */
  store?: EventStore<Tx> | undefined
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
   * event id; a handler's exception with its stack), failure streaks that put the
   * endpoint at risk, and setup mistakes. `console` by default; pino fits too;
   * `false` silences it.
   */
  logger?: Logger | false | undefined
  /**
   * OpenTelemetry spans and metrics through `@opentelemetry/api`, recorded once
   * an SDK is registered (see the README). On Node, Bun and Deno the receiver
   * imports the API by itself when it is installed, once an SDK has registered.
   * On Workers and Edge pass it: `import * as otel from '@opentelemetry/api'`,
   * `telemetry: otel`. `false` leaves it out even when installed.
   */
  telemetry?: false | object | undefined
  /** Every delivery not acknowledged with 2xx. Observes only; never changes the answer. */
  onError?: ((error: WebhookError, event: AnyWebhookEvent | undefined) => void) | undefined
  /** A delivery of an event already handled. Observes only. */
  onDuplicate?: ((event: AnyWebhookEvent, ctx: HandlerContext<undefined>) => void) | undefined
  /** An event older than one already handled for its conversion. Observes only. */
  onStale?: ((event: AnyWebhookEvent, ctx: HandlerContext<undefined>) => void) | undefined
}

/** What {@link createReceiver} returns; adapters call it. */
export interface Receiver {
  /** Runs the whole pipeline for one delivery. Never rejects. */
  receive(input: DeliveryInput): Promise<ReceiveResult>
  /**
   * The answer for a delivery an adapter refuses before the pipeline (405, 413
   * while reading, a body already read...). A code, or the adapter's own
   * `WebhookError`. With the request's `headers`, a delivery's refusal is logged
   * like any other unacknowledged one: status, code, the event id the header
   * claims, and the message with its fix.
   */
  reject(
    code: WebhookErrorCode | WebhookError,
    message?: string | undefined,
    headers?: HeadersInput,
  ): ReceiveResult
  /** Adapters stop reading a body past this many bytes. */
  readonly maxBodyBytes: number
  /** The `logger` option resolved (undefined for `false`), for an adapter's setup mistakes. */
  readonly logger: Logger | undefined
}

/** A handler of any event type, as {@link handlerTable} holds them. */
export type AnyHandler = (event: AnyWebhookEvent, ctx: HandlerContext<unknown>) => unknown

/**
 * Which handler runs for each known event type, from `onConversion` and `on`
 * (`on` wins for its type). Shared with queue workers, so both decide alike.
 */
export function handlerTable<Tx>(options: ReceiverOptions<Tx>): Map<string, AnyHandler> {
  const table = new Map<string, AnyHandler>()
  const { onConversion, on = {} } = options
  const viaConversion = onConversion
    ? (event: AnyWebhookEvent, ctx: HandlerContext<unknown>) => {
        const conversionEvent = event as ConversionEvent
        return onConversion(
          conversionEvent.data.conversion,
          conversionEvent,
          ctx as HandlerContext<Tx>,
        )
      }
    : undefined
  for (const type of EVENT_TYPES) {
    const handler =
      (on[type] as AnyHandler | undefined) ?? (type === 'webhook.test' ? undefined : viaConversion)
    if (handler) table.set(type, handler)
  }
  return table
}

const TX_ENDED =
  "The store's transaction ended before the handled mark was committed (its lease ran out, or the connection was lost): the handler's writes were rolled back."

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

/** The options checked once, with every default filled in. */
interface Setup {
  settings: VerifySettings
  store: EventStore<unknown>
  queue: QueueHandoff | undefined
  leaseMs: number | undefined
  handlers: Map<string, AnyHandler>
  onUnknownEvent: AnyHandler | undefined
  logger: Logger | undefined
  options: ReceiverOptions<unknown>
}

/** Step 1 of {@link createReceiver}: check the options, once, and fill in the defaults. */
function resolveSetup(options: ReceiverOptions<unknown>): Setup {
  const settings = resolveVerifySettings(options, 'createReceiver')
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
  return {
    settings,
    store: options.store ?? (memoryStore() as EventStore<unknown>),
    queue,
    leaseMs,
    handlers,
    onUnknownEvent: options.onUnknownEvent as AnyHandler | undefined,
    logger: resolveLogger(options.logger, 'createReceiver'),
    options,
  }
}

/**
 * Where `@opentelemetry/api` 1.x keeps what is registered (providers, context
 * manager). It appears once an SDK registers anything; until then there is
 * nothing to record, so the API need not be imported.
 */
const OTEL_GLOBAL = Symbol.for('opentelemetry.js.api.1')

/** What the receiver knows of OpenTelemetry; see {@link setupTelemetry}. */
interface TelemetryState {
  current: ReceiverTelemetry | undefined
  /** Set while the API is being imported; deliveries meanwhile wait for it. */
  pending: Promise<void> | undefined
  /** Until an SDK is seen: on the node build, each delivery looks for one. */
  watching: boolean
}

/**
 * Step 2: OpenTelemetry: the API given as `telemetry`, or, on the node build,
 * `@opentelemetry/api` if it is installed, imported once an SDK has registered
 * (the first delivery that sees one starts the import and it and the next wait
 * for it; a cold start with no SDK never pays for the import, 20 to 140 ms here).
 */
function setupTelemetry(options: ReceiverOptions<unknown>): TelemetryState {
  const state: TelemetryState = { current: undefined, pending: undefined, watching: false }
  const given = options.telemetry
  if (given === false) return state
  if (given !== undefined) {
    const api = otelApiOf(given)
    if (api === undefined) {
      throw new TypeError(
        'createReceiver: `telemetry` must be the @opentelemetry/api module (import * as otel from "@opentelemetry/api", 1.4 or later), or false',
      )
    }
    state.current = new ReceiverTelemetry(api)
    return state
  }
  state.watching = true
  return state
}

/** Starts importing the API once an SDK has registered; a no-op until then. */
function watchForSdk(state: TelemetryState): void {
  if ((globalThis as Record<symbol, unknown>)[OTEL_GLOBAL] === undefined) return
  state.watching = false
  const importing = platform.importOtelApi()
  if (importing === undefined) return
  state.pending = importing
    .then((module) => {
      const api = otelApiOf(module)
      if (api !== undefined) state.current = new ReceiverTelemetry(api)
    })
    // An API the receiver cannot use (too old) leaves telemetry off, never the receiver.
    .catch(() => {})
    .finally(() => {
      state.pending = undefined
    })
}

/**
 * Step 3: what happens to every answer of the pipeline once it is decided. A
 * delivery not acknowledged is logged; every answer goes into the failure streak
 * (in the store, so every process counts together), whose warnings come at 5,
 * 10 and 15; and the delivery's span and metrics are finished.
 */
function createSettle(setup: Setup, telemetry: { current: ReceiverTelemetry | undefined }) {
  const { logger, store } = setup
  const log = logger && createDeliveryLog(logger)
  const shared: ((code: string | null) => MaybePromise<FailureStreak>) | undefined =
    typeof store.recordAnswer === 'function'
      ? (code) => (store.recordAnswer as NonNullable<EventStore<unknown>['recordAnswer']>)(code)
      : undefined
  // This process's own count, always kept: the streak of a store without
  // recordAnswer, and the one that still warns while the store cannot count
  // (a Redis outage is itself a streak that gets endpoints disabled).
  const local = localFailureStreak()

  const noteStreak = (streak: FailureStreak) => {
    if (telemetry.current !== undefined) telemetry.current.streak = streak.count
    if (streak.count === 0) return
    const warning = logger && failureStreakWarning(streak)
    if (warning) logger.warn(warning)
  }

  const countAnswer = (code: string | null) => {
    // Counting never delays nor changes the answer.
    const mine = local(code)
    if (shared === undefined) return noteStreak(mine)
    try {
      const streak = shared(code)
      if (isPromiseLike(streak)) Promise.resolve(streak).then(noteStreak, () => noteStreak(mine))
      else noteStreak(streak)
    } catch {
      noteStreak(mine)
    }
  }

  const settle = (
    result: ReceiveResult,
    input: DeliveryInput,
    trace: DeliveryTrace | undefined,
  ) => {
    if (result.status >= 300) {
      if (log) {
        try {
          log(result, input)
        } catch {
          // A logger that throws must not change the answer.
        }
      }
      countAnswer(result.error?.code ?? 'internal_error')
    } else {
      countAnswer(null)
    }
    if (trace !== undefined) trace.end(result)
    return result
  }
  /** The log line of an adapter's refusal: only the headers are known. */
  const logRefusal = (result: ReceiveResult, headers: HeadersInput) => {
    if (!log) return
    try {
      log(result, { headers, rawBody: NO_BODY })
    } catch {
      // A logger that throws must not change the answer.
    }
  }
  return { settle, countAnswer, logRefusal }
}

type Fail = (e: WebhookError, ev?: AnyWebhookEvent) => ReceiveResult

const NO_BODY = new Uint8Array(0)

/**
 * How a claim ends, and the answer each end gets: committed (`processed`), or
 * released after the handler failed (500), or a store that failed (503).
 */
function claimEndings(store: Setup['store'], fail: Fail) {
  const storeFailed = (cause: unknown, event: AnyWebhookEvent) =>
    fail(new WebhookError('store_unavailable', undefined, { cause }), event)

  const handlerFailed = (
    claim: Claim<unknown>,
    cause: unknown,
    event: AnyWebhookEvent,
  ): MaybePromise<ReceiveResult> => {
    const failed = () => fail(new WebhookError('handler_failed', undefined, { cause }), event)
    // The lease runs out on its own before the service's first retry, so a failed
    // release changes nothing the retry would notice.
    try {
      const released = store.release(claim)
      return isPromiseLike(released) ? Promise.resolve(released).then(failed, failed) : failed()
    } catch {
      return failed()
    }
  }

  // A claim's transaction that did not commit took the handler's writes with it:
  // not handled, so not a 2xx. (A store without transactions says false when
  // another attempt owns the event now; the effects of this one stand.)
  const committedAnswer = (
    claim: Claim<unknown>,
    done: boolean,
    event: AnyWebhookEvent,
  ): ReceiveResult =>
    done || claim.tx === undefined
      ? acknowledge('processed', event)
      : storeFailed(new Error(TX_ENDED), event)

  // Handled but not recorded answers 503: a retry may run the handler again,
  // which beats telling the service to stop for an event we could not mark. A
  // store that finds the handler to blame (it left the transaction unusable)
  // throws `handler_failed`, answered 500 like a handler that threw.
  const commitFailed = (cause: unknown, event: AnyWebhookEvent) =>
    cause instanceof WebhookError && cause.code === 'handler_failed'
      ? fail(cause, event)
      : storeFailed(cause, event)

  const commit = (claim: Claim<unknown>, event: AnyWebhookEvent): MaybePromise<ReceiveResult> => {
    try {
      const committed = store.commit(claim)
      return isPromiseLike(committed)
        ? Promise.resolve(committed).then(
            (done) => committedAnswer(claim, done, event),
            (cause) => commitFailed(cause, event),
          )
        : committedAnswer(claim, committed, event)
    } catch (cause) {
      return commitFailed(cause, event)
    }
  }

  return { storeFailed, handlerFailed, commit }
}

/**
 * Step 4: the store and the handler for one verified event: begin, run the
 * handler, then commit (answered `processed`) or release (answered 500).
 */
function createDispatch(setup: Setup, fail: Fail) {
  const { store, options } = setup
  const { onDuplicate, onStale } = options
  const { storeFailed, handlerFailed, commit } = claimEndings(store, fail)

  const runHandler = (
    claim: Claim<unknown>,
    handler: AnyHandler,
    event: AnyWebhookEvent,
    ctx: HandlerContext<unknown>,
    trace: DeliveryTrace | undefined,
  ): MaybePromise<ReceiveResult> => {
    let returned: unknown
    try {
      returned =
        trace === undefined ? handler(event, ctx) : trace.handle(() => handler(event, ctx), event)
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

  const decide = (
    begun: BeginResult<unknown>,
    handler: AnyHandler,
    event: AnyWebhookEvent,
    ctx: HandlerContext<unknown>,
    trace: DeliveryTrace | undefined,
  ): MaybePromise<ReceiveResult> => {
    switch (begun.status) {
      case 'duplicate':
        observe(onDuplicate, event, ctx as HandlerContext<undefined>)
        return acknowledge('duplicate', event)
      case 'stale':
        observe(onStale, event, ctx as HandlerContext<undefined>)
        return acknowledge('stale', event)
      case 'in_progress':
        return fail(new WebhookError('event_in_progress'), event)
    }
    // The handler writes through the claim's transaction, when the store has one.
    ctx.tx = begun.claim.tx
    return runHandler(begun.claim, handler, event, ctx, trace)
  }

  return (
    delivery: VerifiedDelivery,
    handler: AnyHandler,
    trace: DeliveryTrace | undefined,
  ): MaybePromise<ReceiveResult> => {
    const { event, signedAt, attempt, order, conversionId } = delivery
    const ctx: HandlerContext<unknown> = { eventId: event.id, attempt, signedAt, tx: undefined }
    let begun: MaybePromise<BeginResult<unknown>>
    try {
      begun = store.begin({
        eventId: event.id,
        conversionId,
        order,
        createdAt: order,
        leaseMs: setup.leaseMs,
      })
    } catch (cause) {
      return storeFailed(cause, event)
    }
    return isPromiseLike(begun)
      ? Promise.resolve(begun).then(
          (result) => decide(result, handler, event, ctx, trace),
          (cause) => storeFailed(cause, event),
        )
      : decide(begun, handler, event, ctx, trace)
  }
}

/**
 * The handler for an event type, from {@link handlerTable} and `onUnknownEvent`.
 * The spec's types are compared as strings rather than looked up in the Map: the
 * type is a new string in every parsed body, which a Map lookup would hash first.
 */
function handlerLookup(setup: Setup): (type: string) => AnyHandler | undefined {
  const { handlers, onUnknownEvent } = setup
  const known = EVENT_TYPES.map((type) => handlers.get(type))
  return (type) => {
    for (let i = 0; i < EVENT_TYPES.length; i++) {
      if (type === EVENT_TYPES[i]) return known[i]
    }
    return onUnknownEvent
  }
}

/**
 * The framework-neutral receiver: verify, parse, de-duplicate, order, dispatch,
 * and decide the HTTP answer. Adapters only move bytes in and the answer out.
 */
export function createReceiver<Tx = undefined>(typedOptions: ReceiverOptions<Tx>): Receiver {
  const options = typedOptions as ReceiverOptions<unknown>
  const setup = resolveSetup(options)
  const telemetry = setupTelemetry(options)
  const { settle, countAnswer, logRefusal } = createSettle(setup, telemetry)
  const { settings, queue } = setup
  const handlerOf = handlerLookup(setup)
  const { onError, onDuplicate, onStale } = options

  const fail = (error: WebhookError, event?: AnyWebhookEvent): ReceiveResult => {
    observe(onError, error, event)
    return refuse(error, event)
  }
  const dispatch = createDispatch(setup, fail)

  const queued = (queue: QueueHandoff, delivery: VerifiedDelivery) =>
    handOff(queue, options.store as EventStore | undefined, delivery).then((result) => {
      if (result.outcome === undefined) return fail(result.error, delivery.event)
      const { event, attempt, signedAt } = delivery
      const ctx: HandlerContext<undefined> = { eventId: event.id, attempt, signedAt, tx: undefined }
      if (result.outcome === 'duplicate') observe(onDuplicate, event, ctx)
      if (result.outcome === 'stale') observe(onStale, event, ctx)
      return acknowledge(result.outcome, event)
    })

  const afterVerify = (
    delivery: VerifiedDelivery,
    trace: DeliveryTrace | undefined,
  ): MaybePromise<ReceiveResult> => {
    if (trace !== undefined) trace.verified(delivery)
    if (queue !== undefined) return queued(queue, delivery)
    const { event } = delivery
    const handler = handlerOf(event.type)
    if (handler === undefined) return acknowledge('ignored', event)
    return dispatch(delivery, handler, trace)
  }

  const unexpected = (error: unknown): ReceiveResult =>
    fail(
      isWebhookError(error)
        ? error
        : new WebhookError('internal_error', undefined, { cause: error }),
    )

  // A chain rather than async/await, so that a synchronous store and handler
  // cost no promise per step: only the final answer is one.
  const run = (input: DeliveryInput): Promise<ReceiveResult> => {
    let trace: DeliveryTrace | undefined
    try {
      trace = telemetry.current?.start()
      // Both steps return their own native promises or plain answers: `instanceof`
      // tells them apart without looking for a `then` on every answer.
      const delivery = verifyDelivery(input, settings)
      const result =
        delivery instanceof Promise
          ? delivery.then((verified) => afterVerify(verified, trace))
          : afterVerify(delivery, trace)
      return result instanceof Promise
        ? result.then(
            (answer) => settle(answer, input, trace),
            (error) => settle(unexpected(error), input, trace),
          )
        : Promise.resolve(settle(result, input, trace))
    } catch (error) {
      return Promise.resolve(settle(unexpected(error), input, trace))
    }
  }

  return {
    maxBodyBytes: settings.maxBodyBytes,
    logger: setup.logger,
    receive(input) {
      if (telemetry.watching) watchForSdk(telemetry)
      const { pending } = telemetry
      return pending === undefined ? run(input) : pending.then(() => run(input))
    },
    reject(code, message, headers) {
      const error = isWebhookError(code) ? code : new WebhookError(code, message)
      const result = fail(error)
      // An adapter's refusals (a body parser took the bytes, a body over the
      // limit) fail the service's deliveries and count like any other answer.
      if (rowOf(error.code)?.stray !== true) {
        if (headers !== undefined) logRefusal(result, headers)
        countAnswer(error.code)
      }
      return result
    },
  }
}

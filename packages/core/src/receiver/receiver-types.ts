import type { WebhookError, WebhookErrorCode } from '../errors.js'
import type {
  AnyWebhookEvent,
  Conversion,
  ConversionCreatedEvent,
  ConversionEvent,
  ConversionUpdatedEvent,
  UnknownWebhookEvent,
  WebhookTestEvent,
} from '../events/event-types.js'
import type { ReceiveResult } from '../http/answer.js'
import type { HeadersInput } from '../http/headers.js'
import type { DeliveryInput, VerifyOptions } from '../signature/verify.js'
import type { EventStore } from '../store/event-store.js'
import type { Logger } from '../telemetry/delivery-log.js'
import type { QueueHandoff } from './queue-handoff.js'

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
   * shares the handler's database (`postgresStore` on pg or postgres.js,
   * `mysqlStore`, `sqliteStore` on node:sqlite or better-sqlite3, `prismaStore`
   * with Prisma's interactive transaction client): write the event's effects
   * through it and they commit together with the mark, or not at all. Undefined
   * with stores that keep their state elsewhere (memory, Redis).
   */
  tx: Tx
}

/**
 * One event type's handler: the event and its context (`ctx.tx` with a SQL store).
 * A returned promise is awaited; a throw or a rejection answers 500 and the
 * service retries.
 */
export type EventHandler<E, Tx = undefined> = (event: E, ctx: HandlerContext<Tx>) => unknown

/** Handlers for the event types the spec defines. */
export interface EventHandlers<Tx = undefined> {
  'conversion.created'?: EventHandler<ConversionCreatedEvent, Tx> | undefined
  'conversion.updated'?: EventHandler<ConversionUpdatedEvent, Tx> | undefined
  'webhook.test'?: EventHandler<WebhookTestEvent, Tx> | undefined
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
  onUnknownEvent?: EventHandler<UnknownWebhookEvent, Tx> | undefined
  /**
   * De-duplication and ordering state. Default: a new `memoryStore()`; with
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
   * How long a request's whole body may take to arrive, ms from the request's
   * start (not from its last byte). Later: 408 `body_timeout`, the connection
   * closed. Default 5000, well inside the service's 10 s.
   */
  bodyTimeoutMs?: number | undefined
  /**
   * How long after the request's start a handler may run before the delivery is
   * answered 503 `handler_timeout`, ms. The handler goes on: its event stays
   * leased (renewed while it runs, with a store that can), copies get 409, and
   * when it returns the event is marked handled. Default 8000, inside the
   * service's 10 s, or half of a `leaseMs` under 16 s; must be shorter than
   * `leaseMs`.
   */
  answerWithinMs?: number | undefined
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
  /** Adapters answer `body_timeout` to a body not whole this many ms after the request started. */
  readonly bodyTimeoutMs: number
  /** The `logger` option resolved (undefined for `false`), for an adapter's setup mistakes. */
  readonly logger: Logger | undefined
}

import { BODY_TIMEOUT_MS } from '../http/body-deadline.js'
import { resolveVerifySettings, type VerifySettings } from '../signature/verify.js'
import { type EventStore, MAX_TIMER, resolveStoreTimings } from '../store/event-store.js'
import { memoryStore } from '../store/memory-store.js'
import { type Logger, resolveLogger } from '../telemetry/delivery-log.js'
import { type AnyHandler, handlerTable } from './handlers.js'
import type { QueueHandoff } from './queue-handoff.js'
import type { ReceiverOptions } from './receiver-types.js'

/** The options checked once, with every default filled in. */
export interface Setup {
  settings: VerifySettings
  store: EventStore<unknown>
  queue: QueueHandoff | undefined
  leaseMs: number | undefined
  /** {@link ReceiverOptions.bodyTimeoutMs}, checked. */
  bodyTimeoutMs: number
  /** {@link ReceiverOptions.answerWithinMs}, checked. */
  answerWithinMs: number
  handlers: Map<string, AnyHandler>
  onUnknownEvent: AnyHandler | undefined
  logger: Logger | undefined
  options: ReceiverOptions<unknown>
}

/** Step 1 of {@link createReceiver}: check the options, once, and fill in the defaults. */
export function resolveSetup(options: ReceiverOptions<unknown>): Setup {
  const settings = resolveVerifySettings(options, 'createReceiver')
  const { leaseMs, queue } = options
  // Checked here, once: stores trust the lease the receiver hands them.
  if (leaseMs !== undefined) resolveStoreTimings({ leaseMs }, 'createReceiver')
  const bodyTimeoutMs = checkMs('bodyTimeoutMs', options.bodyTimeoutMs, BODY_TIMEOUT_MS)
  // A lease shorter than the answer's bound would free the event for a copy
  // while the first attempt still runs, before anything renews it: with a short
  // lease and no bound of its own, the bound is half the lease.
  const answerWithinMs = checkMs(
    'answerWithinMs',
    options.answerWithinMs,
    leaseMs === undefined ? ANSWER_WITHIN_MS : Math.min(ANSWER_WITHIN_MS, Math.ceil(leaseMs / 2)),
  )
  if (leaseMs !== undefined && leaseMs <= answerWithinMs) {
    throw new TypeError(
      `createReceiver: \`leaseMs\` (${leaseMs}) must be longer than \`answerWithinMs\` (${answerWithinMs})`,
    )
  }
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
    bodyTimeoutMs,
    answerWithinMs,
    handlers,
    onUnknownEvent: options.onUnknownEvent as AnyHandler | undefined,
    logger: resolveLogger(options.logger, 'createReceiver'),
    options,
  }
}

/**
 * Default bound of a delivery's answer, ms from the request's start: inside the
 * service's 10 s, with room for the answer to travel.
 */
export const ANSWER_WITHIN_MS = 8_000

function checkMs(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value < 1 || value > MAX_TIMER) {
    throw new TypeError(
      `createReceiver: \`${name}\` must be a whole number of milliseconds from 1 to ${MAX_TIMER}; got ${value}`,
    )
  }
  return value
}

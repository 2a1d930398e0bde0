import { resolveVerifySettings, type VerifySettings } from '../signature/verify.js'
import { type EventStore, resolveStoreTimings } from '../store/event-store.js'
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

import type { AnyWebhookEvent, ConversionEvent } from '../events/event-types.js'
import { EVENT_TYPES } from '../events/spec-lists.js'
import { isPromiseLike } from '../store/event-store.js'
import type { HandlerContext, ReceiverOptions } from './receiver-types.js'

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

/** Calls an observation hook; whatever it does, the answer stays the same. */
export function observe<A extends unknown[]>(hook: ((...args: A) => void) | undefined, ...args: A) {
  if (hook === undefined) return
  try {
    const returned: unknown = hook(...args)
    if (isPromiseLike(returned)) Promise.resolve(returned).catch(() => {})
  } catch {
    // Observers must not turn a handled event into a failure.
  }
}

/**
 * The handler for an event type, from {@link handlerTable} and `onUnknownEvent`.
 * The spec's types are compared as strings rather than looked up in the Map: the
 * type is a new string in every parsed body, which a Map lookup would hash first.
 */
export function handlerLookup(setup: {
  handlers: Map<string, AnyHandler>
  onUnknownEvent: AnyHandler | undefined
}): (type: string) => AnyHandler | undefined {
  const { handlers, onUnknownEvent } = setup
  const known = EVENT_TYPES.map((type) => handlers.get(type))
  return (type) => {
    for (let i = 0; i < EVENT_TYPES.length; i++) {
      if (type === EVENT_TYPES[i]) return known[i]
    }
    return onUnknownEvent
  }
}

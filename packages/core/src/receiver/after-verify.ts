import { acknowledge, type ReceiveResult } from '../http/answer.js'
import type { VerifiedDelivery } from '../signature/verify.js'
import type { EventStore, MaybePromise } from '../store/event-store.js'
import type { DeliveryTrace } from '../telemetry/otel-telemetry.js'
import type { Fail } from './claim.js'
import { createDispatch } from './dispatch.js'
import { handlerLookup, observe } from './handlers.js'
import { handOff, type QueueHandoff } from './queue-handoff.js'
import type { HandlerContext } from './receiver-types.js'
import type { Setup } from './setup.js'

/**
 * What happens to a verified delivery: handed to the queue (`queue`), or to its
 * handler through the store, or answered `ignored` when no handler takes its type.
 */
export function createAfterVerify(setup: Setup, fail: Fail) {
  const { queue, options } = setup
  const { onDuplicate, onStale } = options
  const handlerOf = handlerLookup(setup)
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
    startedAt: number,
  ): MaybePromise<ReceiveResult> => {
    if (trace !== undefined) trace.verified(delivery)
    if (queue !== undefined) return queued(queue, delivery)
    const { event } = delivery
    const handler = handlerOf(event.type)
    if (handler === undefined) return acknowledge('ignored', event)
    return dispatch(delivery, handler, trace, startedAt)
  }

  return afterVerify
}

import { isWebhookError, rowOf, WebhookError } from '../errors.js'
import type { AnyWebhookEvent } from '../events/event-types.js'
import { acknowledge, type ReceiveResult, refuse } from '../http/answer.js'
import type { DeliveryInput, VerifiedDelivery } from '../signature/verify.js'
import { verifyDelivery } from '../signature/verify.js'
import type { EventStore, MaybePromise } from '../store/event-store.js'
import { setupTelemetry, watchForSdk } from '../telemetry/otel-loader.js'
import type { DeliveryTrace } from '../telemetry/otel-telemetry.js'
import { createDispatch } from './dispatch.js'
import { handlerLookup, observe } from './handlers.js'
import { handOff, type QueueHandoff } from './queue-handoff.js'
import type { HandlerContext, Receiver, ReceiverOptions } from './receiver-types.js'
import { createSettle } from './settle.js'
import { resolveSetup } from './setup.js'

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

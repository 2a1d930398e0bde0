import { isWebhookError, rowOf, WebhookError } from '../errors.js'
import type { AnyWebhookEvent } from '../events/event-types.js'
import { type ReceiveResult, refuse } from '../http/answer.js'
import { type DeliveryInput, verifyDelivery } from '../signature/verify.js'
import { setupTelemetry, watchForSdk } from '../telemetry/otel-loader.js'
import type { DeliveryTrace } from '../telemetry/otel-telemetry.js'
import { createAfterVerify } from './after-verify.js'
import { observe } from './handlers.js'
import type { Receiver, ReceiverOptions } from './receiver-types.js'
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
  const { settings } = setup
  const { onError } = options

  const fail = (error: WebhookError, event?: AnyWebhookEvent): ReceiveResult => {
    observe(onError, error, event)
    return refuse(error, event)
  }
  const afterVerify = createAfterVerify(setup, fail)

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
    const startedAt = input.startedAt ?? Date.now()
    try {
      trace = telemetry.current?.start()
      // Both steps return their own native promises or plain answers: `instanceof`
      // tells them apart without looking for a `then` on every answer.
      const delivery = verifyDelivery(input, settings)
      const result =
        delivery instanceof Promise
          ? delivery.then((verified) => afterVerify(verified, trace, startedAt))
          : afterVerify(delivery, trace, startedAt)
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
    bodyTimeoutMs: setup.bodyTimeoutMs,
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

import { WebhookError } from '../errors.js'
import type { AnyWebhookEvent } from '../events/event-types.js'
import { acknowledge, type ReceiveResult } from '../http/answer.js'
import type { VerifiedDelivery } from '../signature/verify.js'
import {
  type BeginResult,
  type Claim,
  isPromiseLike,
  type MaybePromise,
} from '../store/event-store.js'
import type { DeliveryTrace } from '../telemetry/otel-telemetry.js'
import { createAnswerBound } from './answer-within.js'
import { claimEndings, type Fail } from './claim.js'
import { type AnyHandler, observe } from './handlers.js'
import type { HandlerContext } from './receiver-types.js'
import type { Setup } from './setup.js'

/**
 * Step 4: the store and the handler for one verified event: begin, run the
 * handler, then commit (answered `processed`) or release (answered 500); a
 * handler still running at `answerWithinMs` is answered 503 (answer-within.ts).
 */
export function createDispatch(setup: Setup, fail: Fail) {
  const { store, options } = setup
  const { onDuplicate, onStale } = options
  const { storeFailed, handlerFailed, commit } = claimEndings(store, fail)
  const answerWithin = createAnswerBound(setup, fail)

  const runHandler = (
    claim: Claim<unknown>,
    handler: AnyHandler,
    event: AnyWebhookEvent,
    ctx: HandlerContext<unknown>,
    trace: DeliveryTrace | undefined,
    startedAt: number,
  ): MaybePromise<ReceiveResult> => {
    let returned: unknown
    try {
      returned =
        trace === undefined ? handler(event, ctx) : trace.handle(() => handler(event, ctx), event)
    } catch (cause) {
      return handlerFailed(claim, cause, event)
    }
    if (!isPromiseLike(returned)) return commit(claim, event)
    const settled = Promise.resolve(returned).then(
      () => commit(claim, event),
      (cause) => handlerFailed(claim, cause, event),
    )
    return answerWithin(settled, claim, event, startedAt)
  }

  const decide = (
    begun: BeginResult<unknown>,
    handler: AnyHandler,
    event: AnyWebhookEvent,
    ctx: HandlerContext<unknown>,
    trace: DeliveryTrace | undefined,
    startedAt: number,
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
    return runHandler(begun.claim, handler, event, ctx, trace, startedAt)
  }

  return (
    delivery: VerifiedDelivery,
    handler: AnyHandler,
    trace: DeliveryTrace | undefined,
    startedAt: number,
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
          (result) => decide(result, handler, event, ctx, trace, startedAt),
          (cause) => storeFailed(cause, event),
        )
      : decide(begun, handler, event, ctx, trace, startedAt)
  }
}

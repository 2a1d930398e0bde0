import { isWebhookError, WebhookError } from '../errors.js'
import type { AnyWebhookEvent } from '../events/event-types.js'
import { acknowledge, type ReceiveResult } from '../http/answer.js'
import {
  type Claim,
  type EventStore,
  isPromiseLike,
  type MaybePromise,
} from '../store/event-store.js'

/** Codes a store throws that are answered as they are, not as `store_unavailable`. */
const STORE_VERDICTS: ReadonlySet<string> = new Set(['handler_failed', 'event_held'])

/** Answers a refusal: observes it (`onError`) and builds the answer. */
export type Fail = (e: WebhookError, ev?: AnyWebhookEvent) => ReceiveResult

const TX_ENDED =
  "The store's transaction ended before the handled mark was committed (its lease ran out, or the connection was lost): the handler's writes were rolled back."

/**
 * How a claim ends, and the answer each end gets: committed (`processed`), or
 * released after the handler failed (500), or a store that failed (503).
 */
export function claimEndings(store: EventStore<unknown>, fail: Fail) {
  // A store that finds the handler to blame (it left the transaction unusable,
  // or ended it) throws `handler_failed`, answered 500 like a handler that
  // threw; one that holds an event whose mark escaped its commit throws
  // `event_held`. Anything else a store throws is its own failure: 503.
  const storeFailed = (cause: unknown, event: AnyWebhookEvent) =>
    fail(
      isWebhookError(cause) && STORE_VERDICTS.has(cause.code)
        ? cause
        : new WebhookError('store_unavailable', undefined, { cause }),
      event,
    )

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
  // which beats telling the service to stop for an event we could not mark.
  const commitFailed = storeFailed

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

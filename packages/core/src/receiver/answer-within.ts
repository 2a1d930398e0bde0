/**
 * One answer per delivery within the service's timeout, however long the handler
 * takes. A handler still running at `answerWithinMs` after the request started
 * gets its delivery answered 503 `handler_timeout`; the handler goes on, and
 * its event stays leased (renewed while it runs, when the store can), so copies
 * meanwhile get 409 and never a second run. When it settles, its claim is
 * committed or released as usual; nobody hears that answer.
 */
import { WebhookError } from '../errors.js'
import type { AnyWebhookEvent } from '../events/event-types.js'
import type { ReceiveResult } from '../http/answer.js'
import { type Claim, type EventStore, STORE_DEFAULTS } from '../store/event-store.js'
import type { Fail } from './claim.js'
import type { Setup } from './setup.js'

const PREFIX = 'affiliate-webhooks:'
const seconds = (ms: number) => (ms / 1000).toFixed(1)

/**
 * Renews the claim's lease every third of it until stopped, or until the store
 * says it is no longer the claim's. Stores without `extend` (the SQL stores,
 * whose open transaction holds the row until its own bound) are left alone.
 */
function keepLease(store: EventStore<unknown>, claim: Claim<unknown>, leaseMs: number): () => void {
  const extend = store.extend
  if (extend === undefined) return () => {}
  let stopped = false
  let timer: ReturnType<typeof setTimeout> | undefined
  const renew = () => {
    if (stopped) return
    Promise.resolve()
      .then(() => extend.call(store, claim, leaseMs))
      .then(
        (held) => {
          if (held && !stopped) timer = schedule()
        },
        () => {},
      )
  }
  const schedule = () => {
    const next = setTimeout(renew, Math.max(1, Math.floor(leaseMs / 3)))
    ;(next as { unref?: () => void }).unref?.()
    return next
  }
  // At once: the lease was taken when the handler started, a while ago.
  renew()
  return () => {
    stopped = true
    if (timer !== undefined) clearTimeout(timer)
  }
}

/** Bounds a running handler's answer by the receiver's `answerWithinMs`. */
export function createAnswerBound(setup: Setup, fail: Fail) {
  const { store, answerWithinMs, logger } = setup
  const leaseMs = setup.leaseMs ?? STORE_DEFAULTS.leaseMs

  /** The late end of a handler already answered for: only a failure is worth a line. */
  const lateEnd = (result: ReceiveResult, event: AnyWebhookEvent, ranMs: number) => {
    if (result.status < 300 || logger === undefined) return
    try {
      logger.warn(
        `${PREFIX} ${event.id} (${event.type}): the handler answered ${result.status} ${result.error?.code ?? 'error'} after ${seconds(ranMs)} s, after its delivery was answered 503 handler_timeout; the service's retry runs it again.`,
      )
    } catch {
      // A logger that throws changes nothing here.
    }
  }

  return (
    settled: Promise<ReceiveResult>,
    claim: Claim<unknown>,
    event: AnyWebhookEvent,
    startedAt: number,
  ): Promise<ReceiveResult> => {
    const handlerStarted = Date.now()
    return new Promise<ReceiveResult>((resolve) => {
      let stopRenewing: (() => void) | undefined
      const timer = setTimeout(
        () => {
          const ranMs = Date.now() - handlerStarted
          stopRenewing = keepLease(store, claim, leaseMs)
          resolve(
            fail(
              new WebhookError(
                'handler_timeout',
                `The handler has run ${seconds(ranMs)} s and is still running, ${seconds(Date.now() - startedAt)} s after the request started; it goes on, its event leased, and the service's retry gets 409 until it ends, then duplicate.`,
              ),
              event,
            ),
          )
        },
        Math.max(0, answerWithinMs - (handlerStarted - startedAt)),
      )
      const done = (result: ReceiveResult) => {
        clearTimeout(timer)
        if (stopRenewing === undefined) return resolve(result)
        stopRenewing()
        lateEnd(result, event, Date.now() - handlerStarted)
      }
      settled.then(done, (cause: unknown) =>
        done(fail(new WebhookError('internal_error', undefined, { cause }), event)),
      )
    })
  }
}

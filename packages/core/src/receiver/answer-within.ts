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

/** How often a failed renewal is tried again, as a part of the lease: several tries fit before it ends. */
const RETRY_PARTS = 10

/**
 * Renews the claim's lease every third of it until stopped. A renewal that
 * fails (the store did not answer, or not in time) is tried again every tenth
 * of the lease while the lease may still be held: one lost round trip must not
 * hand the event to a copy while its handler still runs. When the store says
 * the lease is no longer the claim's, or the lease ran out before a renewal got
 * through, `lost` is called once and renewing stops: a copy may run now, and
 * the store's commit, which checks the claim's token, keeps a newer holder's
 * state. Stores without `extend` (the SQL stores, whose open transaction
 * holds the row until its own bound) are left alone.
 */
function keepLease(
  store: EventStore<unknown>,
  claim: Claim<unknown>,
  leaseMs: number,
  takenAt: number,
  lost: () => void,
): () => void {
  const extend = store.extend
  if (extend === undefined) return () => {}
  let stopped = false
  let timer: ReturnType<typeof setTimeout> | undefined
  // The lease was taken no earlier than the request started: it holds until then + leaseMs at least.
  let heldUntil = takenAt + leaseMs
  const retryMs = Math.max(1, Math.floor(leaseMs / RETRY_PARTS))
  const schedule = (ms: number) => {
    if (stopped) return
    timer = setTimeout(renew, ms)
    ;(timer as { unref?: () => void }).unref?.()
  }
  const giveUp = () => {
    if (stopped) return
    stopped = true
    lost()
  }
  const failed = () => {
    if (Date.now() + retryMs < heldUntil) schedule(retryMs)
    else giveUp()
  }
  const renew = () => {
    if (stopped) return
    const askedAt = Date.now()
    // A renewal that hangs counts as failed once the next try is due.
    within(
      Promise.resolve().then(() => extend.call(store, claim, leaseMs)),
      retryMs,
    ).then(
      (held) => {
        if (stopped) return
        if (!held) return giveUp()
        heldUntil = askedAt + leaseMs
        schedule(Math.max(1, Math.floor(leaseMs / 3)))
      },
      () => {
        if (!stopped) failed()
      },
    )
  }
  // At once: the lease was taken when the handler started, a while ago.
  renew()
  return () => {
    stopped = true
    if (timer !== undefined) clearTimeout(timer)
  }
}

/** `promise`, or a rejection once `ms` passed without its answer. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)
  })
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}

/** Bounds a running handler's answer by the receiver's `answerWithinMs`. */
export function createAnswerBound(setup: Setup, fail: Fail) {
  const { store, answerWithinMs, logger } = setup
  // The lease the store took (its own default when the receiver names none), else the receiver's.
  const leaseOf = (claim: Claim<unknown>) =>
    claim.leaseMs ?? setup.leaseMs ?? STORE_DEFAULTS.leaseMs

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

  /** The running handler's lease is gone: a copy may run it again meanwhile. Worth a line, once. */
  const leaseLost = (event: AnyWebhookEvent, ranMs: number) => {
    if (logger === undefined) return
    try {
      logger.warn(
        `${PREFIX} ${event.id} (${event.type}): the handler has run ${seconds(ranMs)} s and its lease could not be renewed (the store refused or did not answer within the lease); a copy of the event may now run the handler while this one still runs. Raise leaseMs, or make the handler faster.`,
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
          stopRenewing = keepLease(store, claim, leaseOf(claim), startedAt, () =>
            leaseLost(event, Date.now() - handlerStarted),
          )
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

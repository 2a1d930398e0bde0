import { ApiError } from '../shared/api-error.js'
import { type DeliveryStatus, RETRY_SCHEDULE_MS } from './schedule.js'

/** Why a failed delivery failed. */
export type FailedBecause = 'attempts_exhausted' | 'endpoint_disabled'

/** The part of a delivery the delivery rules move: its status, round and next attempt. */
export interface DeliveryProgress {
  status: DeliveryStatus
  /** Attempts made in the current round (a replay starts a new round at 0). */
  made: number
  /** How many times it was replayed. */
  replays: number
  /** Service time of the next attempt while pending or retrying. */
  nextAttemptAt: number | undefined
  /** Why a failed delivery failed. */
  failedBecause: FailedBecause | undefined
}

/** A delivery queued at `at`: pending, first attempt due then. */
export const pendingDelivery = (at: number): DeliveryProgress => ({
  status: 'pending',
  made: 0,
  replays: 0,
  nextAttemptAt: at,
  failedBecause: undefined,
})

/** True while the delivery still has an attempt to make. */
export const isQueued = (delivery: Pick<DeliveryProgress, 'status'>): boolean =>
  delivery.status === 'pending' || delivery.status === 'retrying'

/**
 * The outcome of the attempt just made (attempt number `delivery.made`, sent at
 * service time `at`): succeeded, retrying at the previous attempt + the
 * schedule's offset, or failed when the last attempt failed.
 */
export function settleAttempt(
  delivery: DeliveryProgress,
  ok: boolean,
  at: number,
  schedule: readonly number[] = RETRY_SCHEDULE_MS,
): void {
  if (ok) {
    delivery.status = 'succeeded'
    delivery.nextAttemptAt = undefined
    return
  }
  const offset = schedule[delivery.made - 1]
  if (offset === undefined) {
    failDelivery(delivery, 'attempts_exhausted')
    return
  }
  delivery.status = 'retrying'
  // "Offsets after the previous attempt": counted from when it was made.
  delivery.nextAttemptAt = at + offset
}

/** Marks a delivery failed: out of attempts, or due while its endpoint is disabled. */
export function failDelivery(delivery: DeliveryProgress, because: FailedBecause): void {
  delivery.status = 'failed'
  delivery.failedBecause = because
  delivery.nextAttemptAt = undefined
}

/**
 * Replays a succeeded or failed delivery: a fresh round of attempts, the first
 * due at `at`, same event. Throws `delivery_not_replayable` while it is queued.
 */
export function startReplay(delivery: DeliveryProgress & { id: string }, at: number): void {
  if (isQueued(delivery)) {
    throw new ApiError(
      'delivery_not_replayable',
      `Delivery ${delivery.id} is ${delivery.status}; only a succeeded or failed delivery can be replayed.`,
    )
  }
  delivery.replays++
  delivery.made = 0
  delivery.status = 'pending'
  delivery.failedBecause = undefined
  delivery.nextAttemptAt = at
}

/** One delivery of one event to one endpoint, as the delivery history shows it. */
export interface DeliveryRecord extends DeliveryProgress {
  id: string
  webhookId: string
  eventId: string
  eventType: string
  /** The exact body of every attempt. */
  body: string
  /** Service time it was queued, epoch ms. */
  createdAt: number
  /** Attempts made in all rounds. */
  attemptsTotal: number
  /** Of the last attempt: HTTP status, first 500 characters, duration, and why there was no answer. */
  responseStatus: number | null
  responseBody: string | null
  durationMs: number | null
  errorMessage: string | null
}

/** One attempt, as `GET /emulator/log` and the terminal show it. */
export interface AttemptLogEntry {
  /** Service time the attempt was sent, epoch ms. */
  at: number
  /** Service time it was due: queued (or released), or the previous attempt + the offset. */
  dueAt: number
  /** Service time of the batch that sent it (the first at or after `dueAt`). */
  batchAt: number
  webhookId: string
  deliveryId: string
  eventId: string
  eventType: string
  /** 1 to 8 within its round. */
  attempt: number
  /** 2xx within the time limit. */
  ok: boolean
  /** The answer's HTTP status, null when there was none. */
  responseStatus: number | null
  /** The HTTP status as text, or `timeout` / `connection_error`. */
  result: string
  durationMs: number
  errorMessage: string | null
  /** The receiver's own error code (`signature_mismatch`...), when its answer named one. */
  errorCode?: string | null
  /** The receiver's outcome (`processed`, `duplicate`...), when its answer named one. */
  outcome?: string | null
  /** The delivery's status after it: succeeded, retrying or failed (absent from older logs). */
  status?: DeliveryStatus
  /** Service time the next attempt is due, while retrying (absent from older logs). */
  nextAttemptAt?: number | null
}

/** A delivery queued at service time `now`, its first attempt due at `notBefore` when later. */
export function newDeliveryRecord(input: {
  id: string
  webhookId: string
  event: { id: string; type: string }
  body: string
  now: number
  notBefore?: number | undefined
}): DeliveryRecord {
  return {
    id: input.id,
    webhookId: input.webhookId,
    eventId: input.event.id,
    eventType: input.event.type,
    body: input.body,
    createdAt: input.now,
    ...pendingDelivery(Math.max(input.now, input.notBefore ?? input.now)),
    attemptsTotal: 0,
    responseStatus: null,
    responseBody: null,
    durationMs: null,
    errorMessage: null,
  }
}

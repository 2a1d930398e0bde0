import { ServiceError } from '../http/errors.js'
import { readEventStream, type StreamMessage } from '../http/event-stream.js'
import type { Transport } from '../http/transport.js'
import type { CallOptions } from './webhooks.js'

/** `POST /emulator/conversions`: a conversion as the network reports it. */
export interface ConversionInput {
  id: number
  status: string
  /** Fields left out keep the conversion's earlier values; null clears one. */
  programId?: number | null
  channelId?: number | null
  saleAmount?: string | null
  commission?: string | null
  currency?: string | null
  occurredAt?: string | null
}

/** What the emulator did with it: the event (null when the status did not change) and its deliveries. */
export interface EmitResult {
  event: { id: string; type: string } | null
  deliveries: { id: string; webhookId: string }[]
}

/** `GET /emulator/clock`: the emulator's clock and the pace of its batches. */
export interface EmulatorClock {
  /** Service time now (ISO). */
  now: string
  /** Service ms per real ms. */
  timeScale: number
  /** Service ms between two batches of deliveries (0: each one when due). */
  batchIntervalMs: number
  /**
   * Where each endpoint's event stream is (`/emulator/webhooks/{id}/events`);
   * absent from an emulator older than the stream.
   */
  eventStream?: string
}

/** One attempt of `GET /emulator/log`: each attempt's own number and result, in the order made. */
export interface LoggedAttempt {
  /** Service time it was sent (ISO). */
  at: string
  webhookId: string
  deliveryId: string
  eventId: string
  eventType: string
  /** 1 to 8 within its round (a replay starts again at 1). */
  attempt: number
  /** 2xx within the time limit. */
  ok: boolean
  responseStatus: number | null
  durationMs: number
  errorMessage: string | null
  /** The receiver's own error code, when its answer named one. */
  errorCode?: string | null
  /** The receiver's outcome (`processed`...), when its answer named one; absent from older emulators. */
  outcome?: string | null
  /** The delivery's status after it; absent from older emulators. */
  status?: string
  /** When the next attempt is due (ISO), while retrying; absent from older emulators. */
  nextAttemptAt?: string | null
}

/** `POST /emulator/clock`: where the clock is now, and how many attempts the move ran. */
export interface ClockAdvance {
  now: string
  attempts: number
}

/**
 * `api.emulator`: the local emulator's control routes, outside `/v1` (the real
 * service answers them 404 `route_not_found`).
 */
export class EmulatorControls {
  readonly #http: Transport

  constructor(transport: Transport) {
    this.#http = transport
  }

  /**
   * Reports a conversion: new id -> `conversion.created`, new status ->
   * `conversion.updated`, same status -> no event. Not repeated after a lost
   * answer (a repeat would find the status unchanged and emit nothing).
   */
  async emitConversion(input: ConversionInput, options: CallOptions = {}): Promise<EmitResult> {
    const answer = await this.#http.call<EmitResult>(
      { method: 'POST', path: '/emulator/conversions', body: input, signal: options.signal },
      'once',
    )
    return answer.data
  }

  /**
   * The emulator's clock and batch pace. Sent without the key, so the same probe
   * against the real service (which answers 404 or 401) counts against nothing.
   */
  async clock(options: CallOptions = {}): Promise<EmulatorClock> {
    const answer = await this.#http.call<EmulatorClock>(
      { method: 'GET', path: '/emulator/clock', auth: false, signal: options.signal },
      'repeat',
    )
    return answer.data
  }

  /**
   * `GET /emulator/webhooks/{id}/events`: the endpoint's news as the emulator
   * sends it, one message at a time (`ready` with its status, `attempt` with the
   * delivery as the API lists it, `endpoint` when its status changes, `deleted`).
   * Not counted against the rate limit or the quota; ends when the stream does,
   * rejects when `signal` aborts. `lastEventId` asks for the attempts missed
   * since that message.
   */
  async *events(
    webhookId: string,
    options: CallOptions & { lastEventId?: string | undefined; idleMs?: number | undefined } = {},
  ): AsyncGenerator<StreamMessage> {
    const path = `/emulator/webhooks/${encodeURIComponent(webhookId)}/events`
    const body = await this.#http.openStream({
      path,
      signal: options.signal,
      lastEventId: options.lastEventId,
      idleMs: options.idleMs,
    })
    try {
      yield* readEventStream(body)
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason
      // The connection broke mid-stream ("terminated"): a network error like any other.
      if (error instanceof ServiceError) throw error
      const why = error instanceof Error ? error.message : String(error)
      throw new ServiceError(
        0,
        'network_error',
        `GET ${path}: the stream broke (${why})`,
        {},
        {
          cause: error,
        },
      )
    }
  }

  /**
   * `GET /emulator/log`: every attempt the emulator made, oldest first, or with
   * `deliveryId` only that delivery's (an emulator older than the filter sends
   * them all: they are filtered here too). Not counted against the rate limit.
   */
  async log(options: CallOptions & { deliveryId?: string } = {}): Promise<LoggedAttempt[]> {
    const { deliveryId } = options
    const answer = await this.#http.call<LoggedAttempt[]>(
      { method: 'GET', path: '/emulator/log', query: { deliveryId }, signal: options.signal },
      'repeat',
    )
    return deliveryId === undefined
      ? answer.data
      : answer.data.filter((entry) => entry.deliveryId === deliveryId)
  }

  /**
   * Moves the emulator's clock forward by `ms` of service time, running every
   * attempt that comes due, batch by batch; resolves once the last has settled.
   * Not repeated after a lost answer (a repeat would move the clock twice).
   */
  async advanceClock(
    ms: number,
    options: CallOptions & { timeoutMs?: number } = {},
  ): Promise<ClockAdvance> {
    const answer = await this.#http.call<ClockAdvance>(
      {
        method: 'POST',
        path: '/emulator/clock',
        body: { advanceMs: ms },
        signal: options.signal,
        // Each batch may wait out a receiver's 10 s limit: far longer than one call.
        timeoutMs: options.timeoutMs ?? 600_000,
      },
      'once',
    )
    return answer.data
  }
}

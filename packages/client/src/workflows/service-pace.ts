import type { Client } from '../client.js'
import { isServiceError } from '../http/errors.js'

/** The spec's rate limit: requests per fixed one-minute window, per account, shared by every key. */
export const SPEC_RATE_LIMIT = 120
/** The spec's monthly quota: calls per account, reset on the 1st (UTC). */
export const SPEC_MONTHLY_QUOTA = 250_000
/** The service sends deliveries in batches this often (service ms): "batches every minute". */
export const SPEC_BATCH_INTERVAL_MS = 60_000
/** A service day, ms. */
export const DAY_MS = 86_400_000

/** How fast the service on the other end moves, as a poller must know it. */
export interface ServicePace {
  /** `emulator` when `GET /emulator/clock` answered; `service` otherwise. */
  source: 'emulator' | 'service'
  /** Service ms per real ms: 1 for the service, the emulator's `--time-scale`. */
  timeScale: number
  /** Real ms between two batches of deliveries: nothing new can be seen sooner. */
  batchIntervalMs: number
  /**
   * True when the emulator named its event stream (`eventStream` in its clock's
   * answer): a follow listens to it instead of polling. Never for the service.
   */
  liveEvents: boolean
}

/** The real service's pace: a batch a minute, real time. */
export const SERVICE_PACE: ServicePace = {
  source: 'service',
  timeScale: 1,
  batchIntervalMs: SPEC_BATCH_INTERVAL_MS,
  liveEvents: false,
}

/**
 * The pace of the service behind `api`: asks `GET /emulator/clock` without the
 * key (the real service answers 404 or 401, counting nothing) and takes the
 * emulator's time scale, batch interval and whether it has the event stream,
 * or the service's minute. A network failure is thrown: nothing else would
 * work either.
 */
export async function servicePace(
  api: Client,
  options: { signal?: AbortSignal } = {},
): Promise<ServicePace> {
  try {
    const clock = await api.emulator.clock(options.signal ? { signal: options.signal } : {})
    if (!(clock.timeScale > 0) || !(clock.batchIntervalMs >= 0)) return SERVICE_PACE
    // An emulator that sends each delivery when due still moves in service minutes.
    const serviceMs = clock.batchIntervalMs || SPEC_BATCH_INTERVAL_MS
    return {
      source: 'emulator',
      timeScale: clock.timeScale,
      batchIntervalMs: serviceMs / clock.timeScale,
      liveEvents: typeof clock.eventStream === 'string',
    }
  } catch (error) {
    if (isServiceError(error) && error.status >= 400 && error.status < 500) return SERVICE_PACE
    if (isServiceError(error) && error.code === 'invalid_response') return SERVICE_PACE
    throw error
  }
}

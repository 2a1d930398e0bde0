import { DISABLE_AFTER_FAILURES, type EndpointStatus } from './schedule.js'

/** The endpoint as the service sees it: active or disabled, and its failure streak. */
export interface EndpointState {
  /** active or disabled. */
  status: EndpointStatus
  /** Failed attempts in a row across all deliveries. */
  consecutiveFailures: number
  /** Service time the endpoint was disabled, epoch ms. */
  disabledAt: number | null
  /** Service time of the last successful attempt, epoch ms. */
  lastDeliveryAt: number | null
}

/** A new endpoint: active, no failures, never delivered to. */
export const activeEndpoint = (): EndpointState => ({
  status: 'active',
  consecutiveFailures: 0,
  disabledAt: null,
  lastDeliveryAt: null,
})

/** "A successful delivery resets consecutiveFailures" and sets lastDeliveryAt. */
export function recordSuccess(endpoint: EndpointState, at: number): void {
  endpoint.consecutiveFailures = 0
  endpoint.lastDeliveryAt = at
}

/**
 * One more failed attempt in the streak; after `disableAfter` in a row an active
 * endpoint is disabled. Returns true when this failure disabled it.
 */
export function recordFailure(
  endpoint: EndpointState,
  at: number,
  disableAfter: number = DISABLE_AFTER_FAILURES,
): boolean {
  endpoint.consecutiveFailures++
  if (endpoint.status !== 'active' || endpoint.consecutiveFailures < disableAfter) return false
  endpoint.status = 'disabled'
  endpoint.disabledAt = at
  return true
}

/** PATCH status `disabled`: deliveries stop. Returns false when it already was. */
export function disableEndpoint(endpoint: EndpointState, at: number): boolean {
  if (endpoint.status === 'disabled') return false
  endpoint.status = 'disabled'
  endpoint.disabledAt = at
  return true
}

/** PATCH status `active`: deliveries resume and consecutiveFailures is back to 0. */
export function enableEndpoint(endpoint: EndpointState): void {
  endpoint.status = 'active'
  endpoint.consecutiveFailures = 0
  endpoint.disabledAt = null
}

import { platform } from '../platform/index.js'
import { otelApiOf, ReceiverTelemetry } from './otel-telemetry.js'

/**
 * Where `@opentelemetry/api` 1.x keeps what is registered (providers, context
 * manager). It appears once an SDK registers anything; until then there is
 * nothing to record, so the API need not be imported.
 */
const OTEL_GLOBAL = Symbol.for('opentelemetry.js.api.1')

/** What the receiver knows of OpenTelemetry; see {@link setupTelemetry}. */
export interface TelemetryState {
  current: ReceiverTelemetry | undefined
  /** Set while the API is being imported; deliveries meanwhile wait for it. */
  pending: Promise<void> | undefined
  /** Until an SDK is seen: on the node build, each delivery looks for one. */
  watching: boolean
}

/**
 * Step 2: OpenTelemetry: the API given as `telemetry`, or, on the node build,
 * `@opentelemetry/api` if it is installed, imported once an SDK has registered
 * (the first delivery that sees one starts the import and it and the next wait
 * for it; a cold start with no SDK never pays for the import, 20 to 140 ms here).
 */
export function setupTelemetry(options: {
  telemetry?: false | object | undefined
}): TelemetryState {
  const state: TelemetryState = { current: undefined, pending: undefined, watching: false }
  const given = options.telemetry
  if (given === false) return state
  if (given !== undefined) {
    const api = otelApiOf(given)
    if (api === undefined) {
      throw new TypeError(
        'createReceiver: `telemetry` must be the @opentelemetry/api module (import * as otel from "@opentelemetry/api", 1.4 or later), or false',
      )
    }
    state.current = new ReceiverTelemetry(api)
    return state
  }
  state.watching = true
  return state
}

/** Starts importing the API once an SDK has registered; a no-op until then. */
export function watchForSdk(state: TelemetryState): void {
  if ((globalThis as Record<symbol, unknown>)[OTEL_GLOBAL] === undefined) return
  state.watching = false
  const importing = platform.importOtelApi()
  if (importing === undefined) return
  state.pending = importing
    .then((module) => {
      const api = otelApiOf(module)
      if (api !== undefined) state.current = new ReceiverTelemetry(api)
    })
    // An API the receiver cannot use (too old) leaves telemetry off, never the receiver.
    .catch(() => {})
    .finally(() => {
      state.pending = undefined
    })
}

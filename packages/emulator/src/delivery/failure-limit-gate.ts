import type { EndpointState } from './endpoint-state.js'

/**
 * Attempts out to each endpoint, held back at the failure limit. A batch goes
 * out at once, but the 21st attempt is not sent while the 20th may still disable
 * the endpoint: an attempt that could be past the limit, were every attempt out
 * to the endpoint to fail, waits for them first.
 */
export class FailureLimitGate {
  private readonly outTo = new Map<string, Set<Promise<unknown>>>()

  /** `rules` is read at each attempt: the engine's delivery rules. */
  constructor(private readonly rules: { readonly disableAfterFailures: number }) {}

  /**
   * Waits until an attempt to `endpoint` cannot overshoot the limit, then takes
   * a slot (in the same step as the check). Resolves to the slot's release.
   */
  async take(endpoint: { id: string; state: EndpointState }): Promise<() => void> {
    const out = this.outTo.get(endpoint.id) ?? new Set<Promise<unknown>>()
    this.outTo.set(endpoint.id, out)
    while (
      out.size > 0 &&
      endpoint.state.status === 'active' &&
      endpoint.state.consecutiveFailures + out.size >= this.rules.disableAfterFailures
    ) {
      await Promise.race(out)
    }
    let release = () => {}
    const slot = new Promise<void>((resolve) => {
      release = resolve
    })
    out.add(slot)
    return () => {
      out.delete(slot)
      release()
    }
  }
}

import type { Transport } from './transport.js'
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
}

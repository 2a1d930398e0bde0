/** Codes of the service's API errors that the simulator's operations can raise. */
export type SimulatorErrorCode = 'delivery_not_replayable' | 'delivery_not_found'

const STATUS: Record<SimulatorErrorCode, number> = {
  delivery_not_replayable: 409,
  delivery_not_found: 404,
}

const BRAND = Symbol.for('affiliate-webhooks.SimulatorError')

/** A refused simulator operation, with the code and status the service's API would answer. */
export class SimulatorError extends Error {
  override readonly name = 'SimulatorError'
  readonly code: SimulatorErrorCode
  readonly status: number
  readonly [BRAND] = true

  constructor(code: SimulatorErrorCode, message: string) {
    super(message)
    this.code = code
    this.status = STATUS[code]
  }
}

/** True for a {@link SimulatorError}, also one from another copy of this package. */
export function isSimulatorError(value: unknown): value is SimulatorError {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<symbol, unknown>)[BRAND] === true
  )
}

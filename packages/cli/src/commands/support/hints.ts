import type { Io } from '../../framework/io.js'
import { errorHint, type HintTarget } from '../../text/local/emulator-error-hints.js'
import { routeHint } from '../../text/local/emulator-route-hint.js'

/** Writes `hint: ...` on stderr when the error text (and the answer's status) has a usual cause. */
export function writeHint(io: Io, target: HintTarget, text: string, status?: number): void {
  const hint = errorHint(target, text, status)
  if (hint) io.stderr.write(`hint: ${hint}\n`)
}

/** A server that could not listen: the address and why on one line, then the hint for it. */
export function writeCannotListen(
  io: Io,
  command: string,
  address: string,
  error: unknown,
  target: HintTarget,
): void {
  const { code, message } = error as NodeJS.ErrnoException
  io.stderr.write(
    `affiliate-webhooks ${command}: cannot listen on ${address}: ${code ?? message}\n`,
  )
  writeHint(io, target, code ?? message)
}

/** After the app answered 404 or 405 to a POST: `hint:` with the path or method to use. */
export async function writeRouteHint(io: Io, url: string, status: number): Promise<void> {
  io.stderr.write(`hint: ${await routeHint(url, status)}\n`)
}

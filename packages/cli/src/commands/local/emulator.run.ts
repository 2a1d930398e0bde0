import { API_KEY_ENV, API_URL_ENV } from '@affiliate-webhooks/client/internal'
import { createEmulator, type Emulator } from '@affiliate-webhooks/emulator'
import type { Handler } from '../../framework/command.js'
import { EXIT, SECRET_AS_KEY_HINT, UsageError, untilInterrupted } from '../../framework/io.js'
import { emulatorBanner, terminalLog } from '../../text/local/emulator-text.js'
import { writeCannotListen } from '../support/hints.js'
import type { emulator } from './emulator.js'

/** The emulator's banner, then the lines to paste so the management commands use it. */
function banner(emulator: Emulator, statePath: string | undefined): string {
  return [
    ...emulatorBanner(emulator, statePath),
    `Paste to point the management commands (endpoints, trigger, deliveries...) at it:`,
    `export ${API_URL_ENV}=${emulator.url}`,
    `export ${API_KEY_ENV}=${emulator.apiKeys[0]?.key ?? ''}`,
    'Ctrl-C stops it.',
  ].join('\n')
}

/** Runs `emulator`. */
export const run: Handler<typeof emulator.options> = async (values, io) => {
  const port = values.port ?? 4010
  const host = values.host ?? '127.0.0.1'
  if (host === '') throw new UsageError('--host must not be empty')
  const timeScale = values['time-scale'] ?? 1
  if (timeScale === 0) throw new UsageError('--time-scale must be a number > 0, not "0"')
  const statePath = values.state
  if (statePath === '') throw new UsageError('--state must be a file path')
  const catalogPath = values.catalog
  if (catalogPath === '') throw new UsageError('--catalog must be a file path')

  let running: Emulator
  try {
    running = createEmulator({
      // Declared `multiple`: parseArgs gives every --api-key in an array.
      apiKeys: (values['api-key'] as string[] | undefined) ?? [],
      timeScale,
      strict: values.strict === true,
      ...(statePath ? { statePath } : {}),
      ...(catalogPath ? { catalogPath } : {}),
      ...terminalLog((line) => io.stdout.write(`${line}\n`)),
    })
  } catch (error) {
    const message = (error as Error).message
    if (error instanceof TypeError) {
      throw new UsageError(`--api-key: ${message}`, {
        ...(message.includes('whsec_') ? { hint: SECRET_AS_KEY_HINT } : {}),
      })
    }
    io.stderr.write(`affiliate-webhooks emulator: ${message}\n`)
    return EXIT.failed
  }
  try {
    await running.listen(port, host)
  } catch (error) {
    writeCannotListen(io, 'emulator', `${host}:${port}`, error, 'service')
    await running.close()
    return EXIT.failed
  }
  io.stdout.write(`${banner(running, statePath)}\n`)
  await untilInterrupted(io)
  await running.close()
  return EXIT.ok
}

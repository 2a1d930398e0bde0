import { API_KEY_ENV, API_URL_ENV } from '@affiliate-webhooks/client/internal'
import { createEmulator, type Emulator } from '@affiliate-webhooks/emulator'
import { type Command, flag, listenOptions, num, str } from '../../framework/command.js'
import {
  EXIT,
  type Io,
  SECRET_AS_KEY_HINT,
  UsageError,
  untilInterrupted,
} from '../../framework/io.js'
import { emulatorBanner, terminalLog } from '../../text/local/emulator-text.js'
import { writeCannotListen } from '../support/hints.js'

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

export const emulator: Command = {
  name: 'emulator',
  summary: "run the service's API (webhooks, programs, keys) and delivery engine locally",
  usage: [
    `emulator [--port 4010] [--host 127.0.0.1] [--api-key la_...[:scope,scope]]...
                                   [--time-scale N] [--state FILE.json] [--strict] [--catalog FILE.json]`,
    "emulator clock +DURATION      (moves a running emulator's clock: its own help tells how)",
  ],
  about: `Runs the Publisher Affiliate API's webhook side on this machine: GET /v1/health,
/v1/me, /v1/webhooks (register, list, change, delete, rotate-secret, test,
deliveries, replay) with the spec's envelope, errors, keys, scopes and limits,
and the delivery engine (signed attempts, the retry schedule, disable after 20
failures in a row). Emit events and move time with the control routes:
POST /emulator/conversions, POST /emulator/clock {"advanceMs": n}, GET /emulator/log.
The banner's Console line is the web console's address (its token included).`,
  options: {
    ...listenOptions(4010),
    'api-key': {
      type: 'string',
      multiple: true,
      value: 'KEY',
      help: 'la_ + 32 letters or digits, every scope; KEY:scope,scope for a\nkey with only those scopes. Repeatable. Unless one key has\nevery scope, a key is generated and printed.',
    },
    'time-scale': flag.number(
      'N',
      'service time runs N times faster: retry offsets and the\nrate-limit minute are divided by N (default 1)',
      { min: 0 },
    ),
    state: flag.text('FILE', 'keep state in FILE (read at start, written on every change)'),
    strict: flag.bool(
      "the service's URL rules unchanged (public https, port 443);\nby default http and any port are allowed on loopback hosts",
    ),
    catalog: flag.text(
      'FILE',
      'programs and channels to start with, as JSON:\n{"programs": [...], "channels": [...]}; default a small catalogue\n(programs 40 to 47) and channel 7',
    ),
  },
  footer: `Prints one line per delivery attempt: time, endpoint, event, attempt n/8,
result, duration. Exit codes: 0 stopped with Ctrl-C, 1 could not start,
2 wrong usage.`,
  async run(values, io: Io) {
    const port = num(values, 'port') ?? 4010
    const host = str(values, 'host') ?? '127.0.0.1'
    if (host === '') throw new UsageError('--host must not be empty')
    const timeScale = num(values, 'time-scale') ?? 1
    if (timeScale === 0) throw new UsageError('--time-scale must be a number > 0, not "0"')
    const statePath = str(values, 'state')
    if (statePath === '') throw new UsageError('--state must be a file path')
    const catalogPath = str(values, 'catalog')
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
  },
}

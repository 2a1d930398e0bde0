import { DEFAULT_MAX_BODY_BYTES } from '@affiliate-webhooks/core/internal'
import { startRelay } from '@affiliate-webhooks/emulator/internal'
import { type Command, flag, listenOptions, num, str } from '../../framework/command.js'
import { EXIT, requireUrl, UsageError, untilInterrupted } from '../../framework/io.js'
import { formatRelayed } from '../../text/local/emulator-text.js'
import { writeCannotListen } from '../support/hints.js'

export const listen: Command = {
  name: 'listen',
  summary: 'relay deliveries to your app unchanged, printing and saving each one',
  usage: ['listen --forward-to URL [--port 4242] [--host 127.0.0.1] [--save DIR]'],
  about: `A local relay: point the sender (the emulator, send, simulate, or a tunnel from the
service) at it, and each delivery goes to your app unchanged (headers, exact body
bytes); the app's status and answer go back to the sender. One line per delivery:
time, event id, type, attempt, status, ms. With --save, each delivery is written
to a file first (headers and body, byte-exact), so a failure seen once can be
diagnosed (verify --from FILE) and reproduced (send --from FILE URL).

If the app does not answer, the sender gets 502 forward_failed (or 504 after
10 s), never a 2xx: the service would retry, as it should.`,
  options: {
    'forward-to': flag.text('URL', "your app's webhook URL (required)"),
    ...listenOptions(4242),
    save: flag.text('DIR', 'write each delivery to a file in DIR'),
    'max-body': flag.number(
      'BYTES',
      `larger bodies get 413 and are not forwarded (default ${DEFAULT_MAX_BODY_BYTES})`,
      { min: 1, integer: true },
    ),
    json: flag.bool('one JSON object per delivery instead of a line'),
  },
  footer: `Example:
  affiliate-webhooks listen --forward-to http://localhost:3000/hooks --save captures/

Ctrl-C stops it. Exit codes: 0 stopped, 1 could not listen, 2 wrong usage.`,
  async run(values, io) {
    const forwardTo = str(values, 'forward-to')
    if (forwardTo === undefined) {
      throw new UsageError(
        "--forward-to is required: your app's webhook URL, e.g. http://localhost:3000/hooks",
      )
    }
    const target = requireUrl(forwardTo, '--forward-to')
    const port = num(values, 'port') ?? 4242
    const host = str(values, 'host') ?? '127.0.0.1'
    const maxBodyBytes = num(values, 'max-body') ?? DEFAULT_MAX_BODY_BYTES
    const saveDir = str(values, 'save')
    let relay: Awaited<ReturnType<typeof startRelay>>
    try {
      relay = await startRelay({
        forwardTo: target,
        saveDir,
        maxBodyBytes,
        port,
        host,
        onDelivery(delivery) {
          io.stdout.write(
            values.json
              ? `${JSON.stringify({ ...delivery, receivedAt: delivery.receivedAt.toISOString(), durationMs: Math.round(delivery.durationMs) })}\n`
              : `${formatRelayed(delivery)}\n`,
          )
        },
      })
    } catch (error) {
      writeCannotListen(io, 'listen', `${host}:${port}`, error, 'app')
      return EXIT.failed
    }
    const banner = `listening on ${relay.url}, forwarding to ${target}${saveDir ? `, saving to ${saveDir}` : ''} (Ctrl-C stops)`
    io.stderr.write(`${banner}\n`)
    await untilInterrupted(io)
    relay.server.closeAllConnections()
    await new Promise((resolve) => relay.server.close(resolve))
    return EXIT.ok
  },
}

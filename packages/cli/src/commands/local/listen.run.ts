import { DEFAULT_MAX_BODY_BYTES } from '@affiliate-webhooks/core/internal'
import { startRelay } from '@affiliate-webhooks/emulator/internal'
import type { Handler } from '../../framework/command.js'
import { EXIT, requireUrl, UsageError, untilInterrupted } from '../../framework/io.js'
import { formatRelayed } from '../../text/local/emulator-text.js'
import { writeCannotListen } from '../support/hints.js'
import type { listen } from './listen.js'

/** Runs `listen`. */
export const run: Handler<typeof listen.options> = async (values, io) => {
  const forwardTo = values['forward-to']
  if (forwardTo === undefined) {
    throw new UsageError(
      "--forward-to is required: your app's webhook URL, e.g. http://localhost:3000/hooks",
    )
  }
  const target = requireUrl(forwardTo, '--forward-to')
  const port = values.port ?? 4242
  const host = values.host ?? '127.0.0.1'
  const maxBodyBytes = values['max-body'] ?? DEFAULT_MAX_BODY_BYTES
  const saveDir = values.save
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
}

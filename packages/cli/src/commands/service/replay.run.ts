import { type ReplaySummary, replayAll } from '@affiliate-webhooks/client/internal'
import type { Handler } from '../../framework/command.js'
import { EXIT, type Io, interruptible, output, UsageError } from '../../framework/io.js'
import { formatReplaySummary } from '../../text/service/endpoint-text.js'
import { positional, sinceOf, withClient } from '../support/service-command.js'
import { collectDeliveries } from './deliveries.run.js'
import type { replay } from './replay.js'

/** The exit code of a replay of many: interrupted, some refused, or every one queued. */
export const replayExit = (summary: ReplaySummary): number =>
  summary.interrupted ? EXIT.interrupted : summary.failed.length ? EXIT.failed : EXIT.ok

/** A progress line on a terminal's stderr; nothing when stderr is not a terminal. */
export const progressLine = (io: Io, label: string) =>
  io.stderr.isTTY
    ? (done: number, total: number) => {
        const width = 24
        const filled = Math.round((done / Math.max(1, total)) * width)
        io.stderr.write(
          `\r${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}\x1b[K`,
        )
        if (done === total) io.stderr.write('\n')
      }
    : undefined

/** Runs `replay`. */
export const run: Handler<typeof replay.options> = async (values, io, positionals) => {
  const id = positional(positionals, 0, 'endpoint id')
  const deliveryId = positionals[1]
  if (values.failed ? deliveryId !== undefined : deliveryId === undefined) {
    throw new UsageError('give a delivery id, or --failed for every failed delivery (not both)')
  }
  if (positionals.length > 2) throw new UsageError(`unexpected argument ${positionals[2]}`)
  if (values.since !== undefined && !values.failed) {
    throw new UsageError('--since goes with --failed')
  }
  const since = sinceOf(values)
  return withClient('replay', values, io, async (api) => {
    if (deliveryId !== undefined) {
      const result = await api.webhooks.replay(id, deliveryId)
      const queued = result.outcome === 'accepted'
      const text = queued ? 'replay queued (eight fresh attempts)' : 'already being replayed'
      output(io, values, result, `${deliveryId}: ${text}`)
      return EXIT.ok
    }
    const onProgress = progressLine(io, 'replaying')
    const { failed, summary } = await interruptible(io, async (signal) => {
      const failed = await collectDeliveries(api, id, { status: 'failed', since, signal })
      const summary = await replayAll(api, id, failed, {
        signal,
        ...(onProgress ? { onProgress } : {}),
      })
      return { failed, summary }
    })
    const text = formatReplaySummary(summary, failed.length)
    output(io, values, { total: failed.length, ...summary }, text)
    return replayExit(summary)
  })
}

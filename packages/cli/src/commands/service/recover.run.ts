import { recoverEndpoint } from '@affiliate-webhooks/client/internal'
import type { Handler } from '../../framework/command.js'
import { interruptible, output } from '../../framework/io.js'
import { formatRecovery } from '../../text/service/endpoint-text.js'
import { formatStillQueued } from '../../text/service/pacing-text.js'
import { onlyArgument, sinceOf, withClient } from '../support/service-command.js'
import type { recover } from './recover.js'
import { progressLine, replayExit } from './replay.run.js'

/** Runs `recover`. */
export const run: Handler<typeof recover.options> = async (values, io, positionals) => {
  const id = onlyArgument(positionals, 'endpoint id')
  const since = sinceOf(values)
  return withClient('recover', values, io, async (api) => {
    const onProgress = progressLine(io, 'replaying')
    const report = await interruptible(io, (signal) =>
      recoverEndpoint(api, id, { since, signal, ...(onProgress ? { onProgress } : {}) }),
    )
    const queued = formatStillQueued(report.stillQueued)
    output(io, values, report, [formatRecovery(report), queued].filter(Boolean).join('\n'))
    return replayExit(report.replay)
  })
}

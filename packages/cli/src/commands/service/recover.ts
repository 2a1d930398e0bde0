import { recoverEndpoint } from '@affiliate-webhooks/client/internal'
import { interruptible, output } from '../../framework/io.js'
import { formatRecovery } from '../../text/service/endpoint-text.js'
import { costText, formatStillQueued } from '../../text/service/pacing-text.js'
import {
  manageCommand,
  onlyArgument,
  sinceOf,
  sinceOption,
  withClient,
} from '../support/service-command.js'
import { progressLine, replayExit } from './replay.js'

export const recover = manageCommand({
  name: 'recover',
  summary: 're-enable a disabled endpoint and replay what failed meanwhile',
  usage: ['recover <endpointId> [--since TIME]'],
  about: `The answer to "my endpoint got disabled". Fix the receiver first (affiliate-webhooks
doctor <endpointId> says what is wrong), then: re-enables the endpoint, replays
every failed delivery since TIME (default: the start of the failure streak), and
prints the window between the service disabling the endpoint and now, during
which the service queued nothing: conversions from that window must be reconciled
from the service's reports. Deliveries the service still retries cannot be
replayed (the spec refuses it): it says how many and when their next attempts
are due.

${costText('recover')}`,
  options: {
    since: sinceOption('replay the failed deliveries'),
  },
  async run(values, io, positionals) {
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
  },
})

import { formatRecovery, recoverEndpoint } from '@affiliate-webhooks/client'
import {
  MANAGE_FOOTER,
  MANAGE_OPTIONS,
  onlyArgument,
  sinceOf,
  sinceOption,
  withClient,
} from '../manage/api.js'
import type { Command } from './command.js'
import { EXIT, output } from './io.js'
import { interruptSignal, progressLine } from './replay.js'

export const recover: Command = {
  name: 'recover',
  summary: 're-enable a disabled endpoint and replay what failed meanwhile',
  positionals: true,
  usage: ['recover <endpointId> [--since TIME]'],
  about: `The answer to "my endpoint got disabled". Fix the receiver first (affiliate-webhooks
doctor <endpointId> says what is wrong), then: re-enables the endpoint, replays
every failed delivery since TIME (default: the start of the failure streak), and
prints the window between the service disabling the endpoint and now, during
which the service queued nothing: conversions from that window must be reconciled
from the service's reports.`,
  options: {
    since: sinceOption('replay the failed deliveries'),
    ...MANAGE_OPTIONS,
  },
  footer: MANAGE_FOOTER,
  async run(values, io, positionals) {
    const id = onlyArgument(positionals, 'endpoint id')
    const since = sinceOf(values)
    return withClient('recover', values, io, async (api) => {
      const { signal, stop } = interruptSignal(io)
      try {
        const onProgress = progressLine(io, 'replaying')
        const report = await recoverEndpoint(api, id, {
          since,
          signal,
          ...(onProgress ? { onProgress } : {}),
        })
        output(io, values, report, `${formatRecovery(report)}`)
        return report.replay.interrupted
          ? EXIT.interrupted
          : report.replay.failed.length
            ? EXIT.failed
            : EXIT.ok
      } finally {
        stop()
      }
    })
  },
}

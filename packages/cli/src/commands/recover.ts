import { recoverEndpoint } from '@affiliate-webhooks/client'
import {
  clientFrom,
  MANAGE_FOOTER,
  MANAGE_OPTIONS,
  managed,
  onlyArgument,
  sinceOf,
  sinceOption,
} from '../manage/api.js'
import { formatRecovery } from '../manage/format.js'
import type { Command } from './command.js'
import { EXIT, writeJson } from './io.js'
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
    const api = await clientFrom(values, io)
    return managed('recover', values, io, async () => {
      const { signal, stop } = interruptSignal(io)
      try {
        const onProgress = progressLine(io, 'replaying')
        const report = await recoverEndpoint(api, id, {
          since,
          signal,
          ...(onProgress ? { onProgress } : {}),
        })
        if (values.json) writeJson(io, report)
        else io.stdout.write(`${formatRecovery(report)}\n`)
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

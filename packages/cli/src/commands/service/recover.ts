import { costText } from '../../text/service/pacing-text.js'
import { manageCommand, sinceOption } from '../support/manage-options.js'

export const recover = manageCommand({
  endpointIds: true,
  usage: ['recover <endpointId> [--since TIME]'],
  about: `The answer to "my endpoint got disabled". Fix the receiver first (affiliate-webhooks
doctor <endpointId> says what is wrong), then: re-enables the endpoint, replays
every failed delivery whose event the receiver never acknowledged (with --since,
only those created since TIME), names each failed delivery it left and why (its
event was answered 2xx, or it is older than --since), and prints the window
between the service disabling the endpoint and now, during which the service
queued nothing: conversions from that window must be reconciled from the
service's reports. Deliveries the service still retries cannot be replayed (the
spec refuses it): it says how many and when their next attempts are due.

${costText('recover')}`,
  options: {
    since: sinceOption('replay only the failed deliveries'),
  },
})

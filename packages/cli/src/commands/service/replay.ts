import { flag } from '../../framework/command.js'
import { costText } from '../../text/service/pacing-text.js'
import { manageCommand, sinceOption } from '../support/manage-options.js'

export const replay = manageCommand({
  endpointIds: true,
  usage: ['replay <endpointId> <deliveryId>', 'replay <endpointId> --failed [--since TIME]'],
  about: `Starts a fresh set of eight attempts for a succeeded or failed delivery, with the
same event id (your receiver de-duplicates it). With --failed, every failed
delivery of the endpoint, one after another, paced under the service's 120 calls
a minute, with a progress bar and a summary. Ctrl-C stops after the current one.

--failed: ${costText('replay --failed')}`,
  options: {
    failed: flag.bool('every delivery whose status is failed'),
    since: sinceOption('with --failed: only those'),
  },
})

import { flag } from '../../framework/command.js'
import { costText } from '../../text/service/pacing-text.js'
import { manageCommand } from '../support/manage-options.js'

export const test = manageCommand({
  endpointIds: true,
  usage: ['test <endpointId> [--wait] [--timeout DURATION] [--poll DURATION]'],
  about: `Queues a webhook.test event for the endpoint (whatever it subscribes to). With
--wait, follows the delivery until it succeeds or fails, printing each attempt's
status and the receiver's answer. The service retries a failed attempt after 1
minute, then 5, 30 ...; Ctrl-C stops following (the service keeps trying). It
looks once per batch interval (a minute; on the emulator, a minute of its time)
unless --poll says otherwise.

--wait: ${costText('test --wait')}`,
  options: {
    wait: flag.bool('follow the delivery'),
    timeout: flag.text('DURATION', 'stop following after this long (default: until it settles)'),
    poll: flag.text('DURATION', "how often to look (default the service's batch interval)"),
  },
})

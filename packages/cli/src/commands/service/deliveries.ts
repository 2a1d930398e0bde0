import { DELIVERY_STATUSES } from '@affiliate-webhooks/core/internal'
import { flag } from '../../framework/command.js'
import { costText } from '../../text/service/pacing-text.js'
import { manageCommand, sinceOption } from '../support/manage-options.js'

export const deliveries = manageCommand({
  endpointIds: true,
  usage: [
    'deliveries <endpointId> [--status STATUS] [--since TIME]',
    'deliveries <endpointId> --follow [--poll] [--json]',
  ],
  about: `Every delivery of the endpoint, newest first, across all pages: event, type,
status, attempts, and the receiver's last answer. With --follow, a live tail
instead: one line per attempt as it is seen (time, event, type, attempt, HTTP
status and the receiver's error code, ms) and one when the endpoint is disabled
or enabled again. Against the service it looks once per batch interval (a
minute), with jitter, and says what that costs; it waits longer while the
account's rate limit runs low, and stops with one line (exit 1) before the
monthly quota runs out. Against the emulator it listens to the emulator's event
stream instead: each line within moments of the attempt or change, no API call
counted, the stream opened again when it drops; --poll looks once per batch
interval of the emulator's time instead, as against the service. Ctrl-C stops
it (exit 0).

${costText('deliveries')}

--follow: ${costText('deliveries --follow')}`,
  options: {
    follow: flag.bool('follow new attempts live (with --json, one object per line)'),
    poll: flag.bool(
      'with --follow on the emulator: poll as against the service, not its event stream',
    ),
    status: flag.text('STATUS', DELIVERY_STATUSES.join(', ')),
    since: sinceOption('only deliveries'),
  },
})

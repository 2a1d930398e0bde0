import { DELIVERY_STATUSES } from '@affiliate-webhooks/core/internal'
import { flag } from '../../framework/command.js'
import { costText } from '../../text/service/pacing-text.js'
import { manageCommand, sinceOption } from '../support/manage-options.js'

export const deliveries = manageCommand({
  endpointIds: true,
  usage: [
    'deliveries <endpointId> [--status STATUS] [--since TIME]',
    'deliveries <endpointId> --follow [--json]',
  ],
  about: `Every delivery of the endpoint, newest first, across all pages: event, type,
status, attempts, and the receiver's last answer. With --follow, a live tail
instead: one line per attempt as it is seen (time, event, type, attempt, HTTP
status and the receiver's error code, ms) and one when the endpoint is disabled
or enabled again. It looks once per batch interval of the service (a minute; on
the emulator, a minute of its time), with jitter, and says what that costs; it
waits longer while the account's rate limit runs low, and stops with one line
(exit 1) before the monthly quota runs out. Ctrl-C stops it (exit 0).

${costText('deliveries')}

--follow: ${costText('deliveries --follow')}`,
  options: {
    follow: flag.bool('follow new attempts live (with --json, one object per line)'),
    status: flag.text('STATUS', DELIVERY_STATUSES.join(', ')),
    since: sinceOption('only deliveries'),
  },
})

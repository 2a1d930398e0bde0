import { CONVERSION_EVENT_TYPES, CONVERSION_STATUSES } from '@affiliate-webhooks/core'
import { BIN, flag } from '../../framework/command.js'
import { MANAGE_FOOTER, manageCommand } from '../support/manage-options.js'

export const trigger = manageCommand({
  actions: CONVERSION_EVENT_TYPES,
  usage: [
    `trigger conversion.created [--conversion-id ID] [--status STATUS] [--program-id ID]
                 [--channel-id ID] [--commission AMOUNT] [--sale-amount AMOUNT] [--currency CODE] [--wait]`,
    'trigger conversion.updated --conversion-id ID --status STATUS [--commission AMOUNT] ... [--wait]',
  ],
  about: `Reports a conversion to the emulator at $AFFILIATE_API_URL (POST /emulator/conversions),
which emits the event to every active endpoint subscribed to it. A new
conversion id gives conversion.created, a new status of a known one
conversion.updated, the same status nothing (as the service). An update keeps
the amounts, program and channel it had unless you pass them. Prints the event
id; with --wait, follows each delivery until it succeeds, fails for good (all
eight attempts) or --timeout ends: one line per attempt as it is made, naming
its endpoint when the event went to several, and when a retry is due. Move the
emulator's clock meanwhile to see the retries sooner: ${BIN} emulator clock +5m.`,
  options: {
    'conversion-id': flag.number('ID', 'the conversion (default: a new random id)', {
      min: 1,
      integer: true,
    }),
    status: flag.text('STATUS', `${CONVERSION_STATUSES.join(', ')} (default pending)`),
    'program-id': flag.number('ID', 'program earned on (default: one that exists)', {
      min: 1,
      integer: true,
    }),
    'channel-id': flag.number('ID', 'channel that sent the click (default: the first)', {
      min: 1,
      integer: true,
    }),
    commission: flag.text('AMOUNT', "the publisher's share, e.g. 4.20"),
    'sale-amount': flag.text('AMOUNT', 'the order value, e.g. 60.00'),
    currency: flag.text('CODE', 'ISO 4217 code of both amounts, e.g. EUR'),
    wait: flag.bool('follow each delivery to its end, printing every attempt'),
    timeout: flag.text(
      'DURATION',
      'longest --wait (default 2m: deliveries go out in minute batches)',
    ),
  },
  footer: `Examples:
  ${BIN} trigger conversion.created --commission 4.20 --currency EUR --wait
  ${BIN} trigger conversion.updated --conversion-id 123 --status approved

${MANAGE_FOOTER.replace('the endpoint or delivery is not healthy', 'no event, or a delivery attempt failed')}`,
})

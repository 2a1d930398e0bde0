import { APPLICATION_STATUSES } from '@affiliate-webhooks/core/internal'
import { MAX_NOTE_LENGTH } from '@affiliate-webhooks/emulator/internal'
import { flag } from '../../framework/command.js'
import { costText } from '../../text/service/pacing-text.js'
import { manageCommand } from '../support/manage-options.js'

export const MAX_NOTE = MAX_NOTE_LENGTH

export const apply = manageCommand({
  usage: ['apply <programId> --channel ID [--note TEXT]'],
  about: `Applies the channel to the program: an auto program is approved at once, a
manual one is pending until the team reviews it. A channel that applied before
(in any state) is refused with exit code 3 and the existing application; a
rejection cannot be re-applied.`,
  options: {
    channel: flag.text('ID', 'one of your channels, approved and verified (required)'),
    note: flag.text('TEXT', `up to ${MAX_NOTE} characters for the reviewer (not stored)`),
  },
})

export const applications = manageCommand({
  actions: ['list'],
  usage: ['applications list [--status STATUS] [--program ID] [--channel ID]'],
  about: `Every application of the account across channels, newest first, across all
pages, with the merchant's name.

${costText('applications list')}`,
  options: {
    status: flag.text('STATUS', APPLICATION_STATUSES.join(', ')),
    program: flag.text('ID', 'only this program'),
    channel: flag.text('ID', 'only this channel'),
  },
})

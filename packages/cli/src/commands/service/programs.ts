import { APPROVAL_TYPES, PAYOUT_TYPES, PROGRAM_STATUSES } from '@affiliate-webhooks/core/internal'
import { flag } from '../../framework/command.js'
import { costText } from '../../text/service/pacing-text.js'
import { manageCommand } from '../support/manage-options.js'

export const programs = manageCommand({
  actions: ['list', 'get'],
  usage: [
    `programs list [--search TEXT] [--category SLUG] [--payout-type cps|cpc]
                                       [--approval auto|manual] [--channel ID] [--status STATUS]`,
    'programs get <programId> [--channel ID]',
  ],
  about: `list: every program matching the filters (combined with AND), newest first,
across all pages, each once. get: one program with its description, regions
and logo. The status is your application state: for --channel, or the best
across your channels without it.

list: ${costText('programs list')}`,
  options: {
    search: flag.text('TEXT', 'merchant name or domain contains TEXT'),
    category: flag.text('SLUG', 'a category slug (home_garden)'),
    'payout-type': flag.text('TYPE', PAYOUT_TYPES.join(' or ')),
    approval: flag.text('TYPE', APPROVAL_TYPES.join(' or ')),
    channel: flag.text('ID', 'report the status for this channel'),
    status: flag.text('STATUS', PROGRAM_STATUSES.join(', ')),
  },
})

import { CONVERSION_EVENT_TYPES } from '@affiliate-webhooks/core'
import { flag } from '../../framework/command.js'
import { costText } from '../../text/service/pacing-text.js'
import { manageCommand } from '../support/manage-options.js'

/** What `endpoints` does to an endpoint: its first argument. */
export const ENDPOINT_ACTIONS = [
  'list',
  'get',
  'create',
  'update',
  'delete',
  'enable',
  'disable',
] as const

export const endpoints = manageCommand({
  actions: ENDPOINT_ACTIONS,
  endpointIds: true,
  usage: [
    'endpoints list',
    'endpoints get <id>',
    `endpoints create --url URL [--events LIST] [--description TEXT]
                                           (--redis URL | --show-secret)`,
    'endpoints update <id> [--url URL] [--events LIST] [--description TEXT]',
    'endpoints enable|disable|delete <id>',
  ],
  about: `The account's webhook endpoints (at most five). "create" returns the signing
secret once: --redis stores it where receivers using redisSecretSource read it,
--show-secret prints it; one of them is required so it is not lost. "enable"
turns a disabled endpoint back on and resets its failure count (to also replay
what failed meanwhile, use recover).

list: ${costText('endpoints list')}`,
  options: {
    url: flag.text('URL', "the receiver's public https URL"),
    events: flag.text('LIST', `comma-separated (default ${CONVERSION_EVENT_TYPES.join(',')})`),
    description: flag.text('TEXT', 'a label, up to 255 characters ("" clears it on update)'),
    redis: flag.text('URL', 'store the new secret in this Redis (redisSecretSource)'),
    'show-secret': flag.bool('print the new secret'),
    // Not listed: `list --ids` prints one id a line, for the shell completion scripts.
    ids: { type: 'boolean' },
  },
})

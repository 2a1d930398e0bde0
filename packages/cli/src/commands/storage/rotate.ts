import { flag } from '../../framework/command.js'
import { manageCommand } from '../support/manage-options.js'

export const rotate = manageCommand({
  endpointIds: true,
  usage: ['rotate <endpointId> --redis URL [--grace 10m] [--show-secret]'],
  about: `Calls rotate-secret, then puts the new secret first in Redis, where every receiver
using redisSecretSource({ url, endpointId }) finds it at its next delivery, with
no restart; the old secret stays valid there for the grace period, for
deliveries the service signed before it switched. The service itself stops using
the old secret at once. The secret is never printed unless --show-secret.`,
  options: {
    redis: flag.text(
      'URL',
      'the Redis your receivers read their secrets from (required\nunless --show-secret, when you distribute it yourself)',
    ),
    grace: flag.text('DURATION', 'how long the old secret still verifies (default 10m)'),
    'show-secret': flag.bool('print the new secret'),
  },
})

import { flag, str } from '../../framework/command.js'
import { EXIT, UsageError, writeJson } from '../../framework/io.js'
import {
  manageCommand,
  onlyArgument,
  parseDuration,
  withClient,
} from '../support/service-command.js'
import { connectSecretRedis, keepSecret } from './secret-redis.js'

export const rotate = manageCommand({
  name: 'rotate',
  summary:
    "rotate an endpoint's secret with no downtime (new secret first in Redis, old kept for a grace period)",
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
  async run(values, io, positionals) {
    const id = onlyArgument(positionals, 'endpoint id')
    if (str(values, 'redis') === undefined && !values['show-secret']) {
      throw new UsageError(
        'pass --redis URL (where receivers read secrets) or --show-secret: the new secret is shown only once',
      )
    }
    const graceMs = parseDuration('grace', str(values, 'grace') ?? '10m')
    return withClient('rotate', values, io, async (api) => {
      const redis = await connectSecretRedis(values)
      let kept: string
      try {
        const { secret } = await api.webhooks.rotateSecret(id)
        kept = await keepSecret(id, secret, values, redis, graceMs)
      } finally {
        redis?.disconnect()
      }
      if (values.json) {
        writeJson(io, { id, rotated: true, graceMs, notes: kept })
      } else {
        io.stdout.write(
          `${id}: secret rotated; the service signs with the new one from now on\n${kept}\n`,
        )
      }
      return EXIT.ok
    })
  },
})

import type { Handler } from '../../framework/command.js'
import { EXIT, UsageError, writeJson } from '../../framework/io.js'
import { onlyArgument, parseDuration, withClient } from '../support/service-command.js'
import type { rotate } from './rotate.js'
import { connectSecretRedis, keepSecret } from './secret-redis.js'

/** Runs `rotate`. */
export const run: Handler<typeof rotate.options> = async (values, io, positionals) => {
  const id = onlyArgument(positionals, 'endpoint id')
  if (values.redis === undefined && !values['show-secret']) {
    throw new UsageError(
      'pass --redis URL (where receivers read secrets) or --show-secret: the new secret is shown only once',
    )
  }
  const graceMs = parseDuration('grace', values.grace ?? '10m')
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
}

import type { Redis } from 'ioredis'
import type { Handler } from '../../framework/command.js'
import {
  EXIT,
  KEY_AS_SECRET_HINT,
  output,
  readFlagFile,
  SECRET_ENV,
  UsageError,
} from '../../framework/io.js'
import { formatHeldSecrets } from '../../text/storage/secret-text.js'
import { importOptional, REDIS_PACKAGES } from '../support/optional-package.js'
import { managed, positional } from '../support/service-command.js'
import { connectSecretRedis } from './secret-redis.js'
import type { secrets } from './secrets.js'

/** Runs `secrets`. */
export const run: Handler<typeof secrets.options> = async (values, io, positionals) => {
  if (positionals[0] !== 'put') {
    throw new UsageError(`expected "put"${positionals[0] ? `, not "${positionals[0]}"` : ''}`)
  }
  const id = positional(positionals, 1, 'endpoint id')
  if (positionals.length > 2) throw new UsageError(`unexpected argument ${positionals[2]}`)
  if (values.secret !== undefined) {
    throw new UsageError(
      `--secret is not accepted here: it would land in shell history; set ${SECRET_ENV} or use --secret-file`,
    )
  }
  if (values.redis === undefined) throw new UsageError('--redis URL is required')
  const file = values['secret-file']
  const secret = file === undefined ? io.env[SECRET_ENV] : await readFlagFile('secret-file', file)
  if (!secret) throw new UsageError(`no secret: set ${SECRET_ENV} or pass --secret-file FILE`)
  if (!/^whsec_\S+$/.test(secret)) {
    throw new UsageError('not an endpoint secret (whsec_..., no spaces)', {
      ...(secret.startsWith('la_') ? { hint: KEY_AS_SECRET_HINT } : {}),
    })
  }
  return managed('secrets', values, io, async () => {
    const redis = (await connectSecretRedis(values)) as Redis
    try {
      const { redisSecretSource } = await importOptional(
        () => import('@affiliate-webhooks/redis'),
        REDIS_PACKAGES,
        '--redis',
      )
      const source = redisSecretSource({ client: redis, endpointId: id })
      await source.set([secret])
      const held = formatHeldSecrets(source.key, await source.entries())
      output(
        io,
        values,
        { endpointId: id, key: source.key, stored: true },
        `secret stored in Redis key ${source.key}\n${held}`,
      )
      return EXIT.ok
    } finally {
      redis.disconnect()
    }
  })
}

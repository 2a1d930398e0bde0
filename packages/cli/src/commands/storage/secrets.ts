import { redisSecretSource } from '@affiliate-webhooks/redis'
import type { Redis } from 'ioredis'
import { type Command, flag, str } from '../../framework/command.js'
import {
  EXIT,
  KEY_AS_SECRET_HINT,
  output,
  readFlagFile,
  SECRET_ENV,
  UsageError,
} from '../../framework/io.js'
import { formatHeldSecrets } from '../../text/storage/secret-text.js'
import { managed, positional } from '../support/service-command.js'
import { connectSecretRedis } from './secret-redis.js'

export const secrets: Command = {
  name: 'secrets',
  summary: "store an endpoint's secret in Redis, where redisSecretSource reads it",
  positionals: true,
  usage: ['secrets put <endpointId> --redis URL [--secret-file FILE]'],
  about: `Stores the endpoint's current secret in the Redis key that
redisSecretSource({ url, endpointId }) reads, replacing what the key held: the
step from an env-var secret to secrets in Redis. The secret comes from
$${SECRET_ENV} or --secret-file, never from a flag (it would land in shell
history). Prints what the key holds afterwards, each secret by its last four
characters. (rotate and endpoints create --redis write the same key.)`,
  options: {
    redis: flag.text('URL', 'the Redis your receivers read their secrets from'),
    'secret-file': flag.text('FILE', `read the secret from FILE; default $${SECRET_ENV}`),
    // Accepted only to refuse it with a reason.
    secret: { type: 'string' },
    json: flag.bool('machine-readable output'),
    debug: flag.bool('print the stack of an unexpected error'),
  },
  footer: `Example:
  AFFILIATE_WEBHOOK_SECRET=whsec_... affiliate-webhooks secrets put wh_123 --redis redis://127.0.0.1:6379

Exit codes: 0 stored, 2 wrong usage, 4 Redis could not be reached or refused the write.`,
  async run(values, io, positionals) {
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
    if (str(values, 'redis') === undefined) throw new UsageError('--redis URL is required')
    const file = str(values, 'secret-file')
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
  },
}

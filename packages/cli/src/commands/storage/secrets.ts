import { defineCommand, flag } from '../../framework/command.js'
import { SECRET_ENV } from '../../framework/io.js'

export const secrets = defineCommand({
  actions: ['put'],
  endpointIds: true,
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
})

import type { Client, UpdateWebhookInput } from '@affiliate-webhooks/client'
import { CONVERSION_EVENT_TYPES } from '@affiliate-webhooks/core'
import type { Redis } from 'ioredis'
import { flag, str, type Values } from '../../framework/command.js'
import { EXIT, type Io, output, UsageError } from '../../framework/io.js'
import { formatEndpoint, formatEndpoints } from '../../text/service/endpoint-text.js'
import { costText } from '../../text/service/pacing-text.js'
import { connectSecretRedis, keepSecret } from '../storage/secret-redis.js'
import { manageCommand, positional, withClient } from '../support/service-command.js'

function parseEvents(text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined
  const events = text
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)
  if (events.length === 0) throw new UsageError('--events needs at least one event type')
  return events
}

const SUBCOMMANDS = ['list', 'get', 'create', 'update', 'delete', 'enable', 'disable'] as const

export const endpoints = manageCommand({
  name: 'endpoints',
  summary: 'list, create, change, enable, disable or delete webhook endpoints',
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
  async run(values, io, positionals) {
    const sub = positionals[0]
    if (!(SUBCOMMANDS as readonly string[]).includes(sub ?? '')) {
      throw new UsageError(
        `expected one of ${SUBCOMMANDS.join(', ')}${sub ? `, not "${sub}"` : ''}`,
      )
    }
    if (positionals.length > (sub === 'list' || sub === 'create' ? 1 : 2)) {
      throw new UsageError(`unexpected argument ${positionals.at(-1)}`)
    }
    const id = sub === 'list' || sub === 'create' ? '' : positional(positionals, 1, 'endpoint id')
    if (sub === 'create' && str(values, 'redis') === undefined && !values['show-secret']) {
      throw new UsageError(
        'the secret is shown only once: pass --redis URL to store it, or --show-secret to print it',
      )
    }
    if (sub === 'create' && !str(values, 'url')) throw new UsageError('--url is required')
    return withClient('endpoints', values, io, async (api) => {
      const redis = sub === 'create' ? await connectSecretRedis(values) : undefined
      try {
        return await run(api, sub as (typeof SUBCOMMANDS)[number], id, values, io, redis)
      } finally {
        redis?.disconnect()
      }
    })
  },
})

async function run(
  api: Client,
  sub: (typeof SUBCOMMANDS)[number],
  id: string,
  values: Values,
  io: Io,
  redis: Redis | undefined,
) {
  const show = (value: unknown, text: string) => output(io, values, value, text)
  switch (sub) {
    case 'list': {
      const list = await api.webhooks.list()
      if (values.ids) io.stdout.write(list.map((endpoint) => `${endpoint.id}\n`).join(''))
      else show(list, formatEndpoints(list))
      return EXIT.ok
    }
    case 'get': {
      const endpoint = await api.webhooks.get(id)
      show(endpoint, formatEndpoint(endpoint))
      return EXIT.ok
    }
    case 'create': {
      const description = str(values, 'description')
      const made = await api.webhooks.create({
        url: str(values, 'url') as string,
        events: parseEvents(str(values, 'events')) ?? [...CONVERSION_EVENT_TYPES],
        ...(description ? { description } : {}),
      })
      const { secret, ...endpoint } = made
      const kept = await keepSecret(made.id, secret, values, redis)
      show(values['show-secret'] ? made : endpoint, `created\n${formatEndpoint(made)}\n${kept}`)
      return EXIT.ok
    }
    case 'update': {
      const changes: UpdateWebhookInput = {}
      const url = str(values, 'url')
      const events = parseEvents(str(values, 'events'))
      const description = str(values, 'description')
      if (url !== undefined) changes.url = url
      if (events !== undefined) changes.events = events
      if (description !== undefined) changes.description = description === '' ? null : description
      if (Object.keys(changes).length === 0) {
        throw new UsageError('nothing to change: pass --url, --events or --description')
      }
      const endpoint = await api.webhooks.update(id, changes)
      show(endpoint, `updated\n${formatEndpoint(endpoint)}`)
      return EXIT.ok
    }
    case 'enable':
    case 'disable': {
      const endpoint = await api.webhooks.update(id, {
        status: sub === 'enable' ? 'active' : 'disabled',
      })
      show(endpoint, `${endpoint.id} is ${endpoint.status}`)
      return EXIT.ok
    }
    case 'delete':
      await api.webhooks.delete(id)
      show({ id, deleted: true }, `${id} deleted`)
      return EXIT.ok
  }
}

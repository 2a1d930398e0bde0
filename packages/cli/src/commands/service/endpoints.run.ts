import type { Client, UpdateWebhookInput } from '@affiliate-webhooks/client'
import { CONVERSION_EVENT_TYPES } from '@affiliate-webhooks/core'
import type { Redis } from 'ioredis'
import type { Handler, ValuesOf } from '../../framework/command.js'
import { EXIT, type Io, output, UsageError } from '../../framework/io.js'
import { formatEndpoint, formatEndpoints } from '../../text/service/endpoint-text.js'
import { connectSecretRedis, keepSecret } from '../storage/secret-redis.js'
import { positional, withClient } from '../support/service-command.js'
import type { endpoints } from './endpoints.js'
import { ENDPOINT_ACTIONS } from './endpoints.js'

/** The flags of `endpoints`, typed from its declaration. */
type EndpointValues = ValuesOf<typeof endpoints.options>

function parseEvents(text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined
  const events = text
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)
  if (events.length === 0) throw new UsageError('--events needs at least one event type')
  return events
}

const SUBCOMMANDS = ENDPOINT_ACTIONS

async function runAction(
  api: Client,
  sub: (typeof SUBCOMMANDS)[number],
  id: string,
  values: EndpointValues,
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
      const description = values.description
      const made = await api.webhooks.create({
        url: values.url as string,
        events: parseEvents(values.events) ?? [...CONVERSION_EVENT_TYPES],
        ...(description ? { description } : {}),
      })
      const { secret, ...endpoint } = made
      const kept = await keepSecret(made.id, secret, values, redis)
      show(values['show-secret'] ? made : endpoint, `created\n${formatEndpoint(made)}\n${kept}`)
      return EXIT.ok
    }
    case 'update': {
      const changes: UpdateWebhookInput = {}
      const url = values.url
      const events = parseEvents(values.events)
      const description = values.description
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

/** Runs `endpoints`. */
export const run: Handler<typeof endpoints.options> = async (values, io, positionals) => {
  const sub = positionals[0]
  if (!(SUBCOMMANDS as readonly string[]).includes(sub ?? '')) {
    throw new UsageError(`expected one of ${SUBCOMMANDS.join(', ')}${sub ? `, not "${sub}"` : ''}`)
  }
  if (positionals.length > (sub === 'list' || sub === 'create' ? 1 : 2)) {
    throw new UsageError(`unexpected argument ${positionals.at(-1)}`)
  }
  const id = sub === 'list' || sub === 'create' ? '' : positional(positionals, 1, 'endpoint id')
  if (sub === 'create' && values.redis === undefined && !values['show-secret']) {
    throw new UsageError(
      'the secret is shown only once: pass --redis URL to store it, or --show-secret to print it',
    )
  }
  if (sub === 'create' && !values.url) throw new UsageError('--url is required')
  return withClient('endpoints', values, io, async (api) => {
    const redis = sub === 'create' ? await connectSecretRedis(values) : undefined
    try {
      return await runAction(api, sub as (typeof SUBCOMMANDS)[number], id, values, io, redis)
    } finally {
      redis?.disconnect()
    }
  })
}

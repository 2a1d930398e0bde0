import type { Client, Delivery, DeliveryStatus } from '@affiliate-webhooks/client'
import {
  clientFrom,
  MANAGE_FOOTER,
  MANAGE_OPTIONS,
  managed,
  onlyArgument,
  sinceOf,
  sinceOption,
} from '../manage/api.js'
import { formatDeliveries } from '../manage/format.js'
import { type Command, str } from './command.js'
import { EXIT, UsageError, writeJson } from './io.js'

export const DELIVERY_STATUSES = ['pending', 'retrying', 'succeeded', 'failed'] as const

export function parseStatus(text: string | undefined): DeliveryStatus | undefined {
  if (text === undefined) return undefined
  if (!(DELIVERY_STATUSES as readonly string[]).includes(text)) {
    throw new UsageError(`--status must be one of ${DELIVERY_STATUSES.join(', ')}, not "${text}"`)
  }
  return text as DeliveryStatus
}

/** Deliveries newest first, down to `since` (deliveries carry createdAt; without it all are kept). */
export async function collectDeliveries(
  api: Client,
  id: string,
  filter: { status?: DeliveryStatus | undefined; since?: Date | undefined; signal?: AbortSignal },
): Promise<Delivery[]> {
  const found: Delivery[] = []
  for await (const delivery of api.webhooks.deliveries(id, {
    ...(filter.status ? { status: filter.status } : {}),
    ...(filter.signal ? { signal: filter.signal } : {}),
  })) {
    const created = delivery.createdAt ? Date.parse(delivery.createdAt) : Number.NaN
    // Newest first: once one is older than --since, so are the rest.
    if (filter.since && created < filter.since.getTime()) break
    found.push(delivery)
  }
  return found
}

export const deliveries: Command = {
  name: 'deliveries',
  summary: "an endpoint's delivery history, newest first",
  positionals: true,
  usage: ['deliveries <endpointId> [--status STATUS] [--since TIME]'],
  about: `Every delivery of the endpoint, newest first, across all pages: event, type,
status, attempts, and the receiver's last answer.`,
  options: {
    status: { type: 'string', value: 'STATUS', help: DELIVERY_STATUSES.join(', ') },
    since: sinceOption('only deliveries'),
    ...MANAGE_OPTIONS,
  },
  footer: MANAGE_FOOTER,
  async run(values, io, positionals) {
    const id = onlyArgument(positionals, 'endpoint id')
    const status = parseStatus(str(values, 'status'))
    const since = sinceOf(values)
    const api = await clientFrom(values, io)
    return managed('deliveries', values, io, async () => {
      const found = await collectDeliveries(api, id, { status, since })
      if (values.json) writeJson(io, found)
      else io.stdout.write(`${formatDeliveries(found)}\n`)
      return EXIT.ok
    })
  },
}

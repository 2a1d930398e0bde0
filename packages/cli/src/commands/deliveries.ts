import {
  type Client,
  DELIVERY_STATUSES,
  type DeliveriesOptions,
  type Delivery,
  type DeliveryStatus,
} from '@affiliate-webhooks/client'
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

export function parseStatus(text: string | undefined): DeliveryStatus | undefined {
  if (text === undefined) return undefined
  if (!(DELIVERY_STATUSES as readonly string[]).includes(text)) {
    throw new UsageError(`--status must be one of ${DELIVERY_STATUSES.join(', ')}, not "${text}"`)
  }
  return text as DeliveryStatus
}

/** Every delivery the filter lets through, newest first. */
export async function collectDeliveries(
  api: Client,
  id: string,
  filter: DeliveriesOptions,
): Promise<Delivery[]> {
  const found: Delivery[] = []
  for await (const delivery of api.webhooks.deliveries(id, filter)) found.push(delivery)
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

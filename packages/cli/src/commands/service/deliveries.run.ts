import type {
  Client,
  DeliveriesOptions,
  Delivery,
  DeliveryStatus,
} from '@affiliate-webhooks/client'
import { followDeliveries } from '@affiliate-webhooks/client/internal'
import { DELIVERY_STATUSES } from '@affiliate-webhooks/core/internal'
import type { Handler } from '../../framework/command.js'
import { EXIT, type Io, interruptible, output, UsageError } from '../../framework/io.js'
import { formatDeliveries, formatFollowEvent } from '../../text/service/endpoint-text.js'
import {
  formatFollowLive,
  formatFollowNotice,
  formatFollowPlan,
} from '../../text/service/pacing-text.js'
import { clientFrom, managed, onlyArgument, sinceOf } from '../support/service-command.js'
import type { deliveries } from './deliveries.js'

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

/**
 * `--follow`: each attempt and endpoint change on stdout as it comes; the plan
 * (or the live stream's line), back-offs, reconnects and a stop on stderr.
 * Until Ctrl-C (0) or the quota stop (1).
 */
async function tail(
  api: Client,
  id: string,
  io: Io,
  options: { json: boolean; poll: boolean },
): Promise<number> {
  const { json, poll } = options
  return interruptible(io, async (signal) => {
    try {
      for await (const event of followDeliveries(api, id, { signal, poll })) {
        if (event.type === 'plan') io.stderr.write(`${formatFollowPlan(id, event.plan)}\n`)
        else if (event.type === 'live') io.stderr.write(`${formatFollowLive(id)}\n`)
        else if (event.type === 'backoff' || event.type === 'reconnect')
          io.stderr.write(`${formatFollowNotice(event)}\n`)
        else if (event.type === 'stopped') {
          io.stderr.write(`${formatFollowNotice(event)}\n`)
          return EXIT.failed
        } else io.stdout.write(`${json ? JSON.stringify(event) : formatFollowEvent(event)}\n`)
      }
    } catch (error) {
      // Ctrl-C is how a tail ends: not a failure.
      if (!signal.aborted) throw error
    }
    return EXIT.ok
  })
}

/** Runs `deliveries`. */
export const run: Handler<typeof deliveries.options> = async (values, io, positionals) => {
  const id = onlyArgument(positionals, 'endpoint id')
  const status = parseStatus(values.status)
  const since = sinceOf(values)
  if (values.follow && (status || since)) {
    throw new UsageError('--follow shows every new attempt: it takes no --status or --since')
  }
  if (values.poll && !values.follow) throw new UsageError('--poll goes with --follow')
  const api = await clientFrom(values, io)
  const tailing = { json: values.json === true, poll: values.poll === true }
  if (values.follow) return managed('deliveries', values, io, () => tail(api, id, io, tailing))
  return managed('deliveries', values, io, async () => {
    const found = await collectDeliveries(api, id, { status, since })
    output(io, values, found, formatDeliveries(found))
    return EXIT.ok
  })
}

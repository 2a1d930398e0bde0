import { setTimeout as delay } from 'node:timers/promises'
import type { Client, Delivery } from '@affiliate-webhooks/client'
import {
  clientFrom,
  MANAGE_FOOTER,
  MANAGE_OPTIONS,
  managed,
  onlyArgument,
  parseDuration,
} from '../manage/api.js'
import { answerOf } from '../manage/format.js'
import { type Command, str } from './command.js'
import { EXIT, type Io, writeJson } from './io.js'
import { interruptSignal } from './replay.js'

async function findDelivery(api: Client, id: string, deliveryId: string, signal: AbortSignal) {
  for await (const delivery of api.webhooks.deliveries(id, { signal })) {
    if (delivery.id === deliveryId) return delivery
  }
  return undefined
}

/** Follows one delivery, printing each attempt as it happens, until it settles. */
async function follow(
  api: Client,
  id: string,
  deliveryId: string,
  io: Io,
  pollMs: number,
  timeoutMs: number | undefined,
) {
  const { signal, stop } = interruptSignal(io)
  const deadline = timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + timeoutMs
  let seen = ''
  try {
    for (;;) {
      const delivery: Delivery | undefined = await findDelivery(api, id, deliveryId, signal)
      const state = delivery
        ? `${delivery.status}/${delivery.attempts ?? ''}/${delivery.responseStatus ?? delivery.errorMessage ?? ''}`
        : ''
      if (
        delivery &&
        state !== seen &&
        (delivery.attempts ?? 1) > 0 &&
        (delivery.responseStatus || delivery.errorMessage)
      ) {
        io.stdout.write(
          `attempt ${delivery.attempts ?? '?'}: ${delivery.status}  ${answerOf(delivery)}\n`,
        )
      }
      seen = state
      if (delivery?.status === 'succeeded') return EXIT.ok
      if (delivery?.status === 'failed') return EXIT.failed
      if (Date.now() >= deadline) {
        io.stdout.write(
          `still ${delivery?.status ?? 'queued'} after --timeout; the service keeps trying\n`,
        )
        return EXIT.failed
      }
      await delay(pollMs, undefined, { signal })
    }
  } catch (error) {
    if (signal.aborted) return EXIT.interrupted
    throw error
  } finally {
    stop()
  }
}

export const test: Command = {
  name: 'test',
  summary: 'send the test event to an endpoint; --wait follows its delivery',
  positionals: true,
  usage: ['test <endpointId> [--wait] [--timeout DURATION] [--poll DURATION]'],
  about: `Queues a webhook.test event for the endpoint (whatever it subscribes to). With
--wait, follows the delivery until it succeeds or fails, printing each attempt's
status and the receiver's answer. The service retries a failed attempt after 1
minute, then 5, 30 ...; Ctrl-C stops following (the service keeps trying).`,
  options: {
    wait: { type: 'boolean', help: 'follow the delivery' },
    timeout: {
      type: 'string',
      value: 'DURATION',
      help: 'stop following after this long (default: until it settles)',
    },
    poll: { type: 'string', value: 'DURATION', help: 'how often to look (default 1s)' },
    ...MANAGE_OPTIONS,
  },
  footer: MANAGE_FOOTER,
  async run(values, io, positionals) {
    const id = onlyArgument(positionals, 'endpoint id')
    const timeoutText = str(values, 'timeout')
    const timeoutMs = timeoutText === undefined ? undefined : parseDuration('timeout', timeoutText)
    const pollMs = parseDuration('poll', str(values, 'poll') ?? '1s')
    const api = await clientFrom(values, io)
    return managed('test', values, io, async () => {
      const { eventId, deliveryId } = await api.webhooks.sendTest(id)
      if (values.json && !values.wait) writeJson(io, { eventId, deliveryId })
      else io.stdout.write(`queued webhook.test ${eventId} as delivery ${deliveryId}\n`)
      return values.wait ? follow(api, id, deliveryId, io, pollMs, timeoutMs) : EXIT.ok
    })
  },
}

import type { Client, Delivery } from '@affiliate-webhooks/client'
import { followDelivery, planFollow, servicePace } from '@affiliate-webhooks/client/internal'
import type { Handler } from '../../framework/command.js'
import { EXIT, type Io, interruptible, writeJson } from '../../framework/io.js'
import { answerOf } from '../../text/service/endpoint-text.js'
import { onlyArgument, parseDuration, withClient } from '../support/service-command.js'
import type { test } from './test-event.js'

/** Follows one delivery, printing each attempt as it happens, until it settles. */
async function follow(
  api: Client,
  id: string,
  deliveryId: string,
  io: Io,
  pollMs: number,
  timeoutMs: number | undefined,
) {
  return interruptible(io, async (signal) => {
    const limit =
      timeoutMs === undefined ? signal : AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)])
    const following = { signal: limit, intervalMs: pollMs }
    let last: Delivery | undefined
    try {
      for await (last of followDelivery(api, id, deliveryId, following)) {
        io.stdout.write(`attempt ${last.attempts ?? '?'}: ${last.status}  ${answerOf(last)}\n`)
      }
      return last?.status === 'succeeded' ? EXIT.ok : EXIT.failed
    } catch (error) {
      if (signal.aborted) return EXIT.interrupted
      if (!limit.aborted) throw error
      io.stdout.write(
        `still ${last?.status ?? 'queued'} after --timeout; the service keeps trying\n`,
      )
      return EXIT.failed
    }
  })
}

/** Runs `test`. */
export const run: Handler<typeof test.options> = async (values, io, positionals) => {
  const id = onlyArgument(positionals, 'endpoint id')
  const timeoutText = values.timeout
  const timeoutMs = timeoutText === undefined ? undefined : parseDuration('timeout', timeoutText)
  const pollText = values.poll
  const pollGiven = pollText === undefined ? undefined : parseDuration('poll', pollText)
  return withClient('test', values, io, async (api) => {
    const { eventId, deliveryId } = await api.webhooks.sendTest(id)
    if (values.json && !values.wait) writeJson(io, { eventId, deliveryId })
    else io.stdout.write(`queued webhook.test ${eventId} as delivery ${deliveryId}\n`)
    if (!values.wait) return EXIT.ok
    const pollMs = pollGiven ?? planFollow(await servicePace(api)).intervalMs
    return follow(api, id, deliveryId, io, pollMs, timeoutMs)
  })
}

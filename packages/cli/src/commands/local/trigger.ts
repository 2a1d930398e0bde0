import type { Client } from '@affiliate-webhooks/client'
import {
  type AttemptSeen,
  attemptSeen,
  type ConversionInput,
  type EmitResult,
  followDelivery,
  MIN_POLL_MS,
} from '@affiliate-webhooks/client/internal'
import { CONVERSION_EVENT_TYPES, CONVERSION_STATUSES } from '@affiliate-webhooks/core'
import { isWrongRoute, randomConversionId } from '@affiliate-webhooks/emulator/internal'
import { BIN, flag, num, str, type Values } from '../../framework/command.js'
import { EXIT, type Io, interruptible, UsageError } from '../../framework/io.js'
import { formatFollowEvent } from '../../text/service/endpoint-text.js'
import { writeRouteHint } from '../support/hints.js'
import {
  MANAGE_FOOTER,
  manageCommand,
  onlyArgument,
  parseDuration,
  withClient,
} from '../support/service-command.js'

const TYPES = CONVERSION_EVENT_TYPES
const FIELDS = [
  ['commission', 'commission'],
  ['sale-amount', 'saleAmount'],
  ['currency', 'currency'],
] as const

/** The conversion the flags describe; a flag not given is left out, so the emulator keeps its earlier value. */
function conversionOf(type: string, values: Values): ConversionInput {
  const given = num(values, 'conversion-id')
  if (type === 'conversion.updated' && given === undefined) {
    throw new UsageError('an update needs --conversion-id ID of a conversion triggered before')
  }
  if (type === 'conversion.updated' && str(values, 'status') === undefined) {
    throw new UsageError('an update is a change of status: pass --status STATUS')
  }
  const input: ConversionInput = {
    id: given ?? randomConversionId(),
    status: str(values, 'status') ?? 'pending',
  }
  const programId = num(values, 'program-id')
  const channelId = num(values, 'channel-id')
  if (programId !== undefined) input.programId = programId
  if (channelId !== undefined) input.channelId = channelId
  // The emulator checks status, amounts and currency: 400, naming each field.
  for (const [flag, field] of FIELDS) {
    const text = str(values, flag)
    if (text !== undefined) input[field] = text
  }
  return input
}

/** One delivery followed to its end: each attempt as a line; true when it succeeded. */
async function followOne(
  api: Client,
  delivery: EmitResult['deliveries'][number],
  options: { values: Values; io: Io; signal: AbortSignal; intervalMs: number; several: boolean },
): Promise<boolean> {
  const { values, io, signal, intervalMs, several } = options
  let hinted = false
  let last: AttemptSeen | undefined
  const following = { signal, intervalMs }
  for await (const found of followDelivery(api, delivery.webhookId, delivery.id, following)) {
    last = attemptSeen(delivery.webhookId, found)
    const line = values.json ? JSON.stringify(last) : formatAttempt(last, several)
    io.stdout.write(`${line}\n`)
    if (!hinted && isWrongRoute(last.responseStatus)) {
      hinted = true
      const { url } = await api.webhooks.get(delivery.webhookId, { signal })
      await writeRouteHint(io, url, last.responseStatus as number)
    }
  }
  return last?.status === 'succeeded'
}

/** An attempt line; with several endpoints it names its endpoint; a retry says when it is due. */
const formatAttempt = (seen: AttemptSeen, several: boolean) =>
  `${formatFollowEvent(seen, { endpoint: several })}${seen.nextAttemptAt ? `  next attempt ${seen.nextAttemptAt.slice(11, 19)}` : ''}`

/**
 * `--wait`: every delivery followed at once until it succeeds, fails for good or
 * the wait ends; the route hint after a 404 or 405. Each endpoint's newest
 * deliveries are read once a look, the looks spaced so the emulator's rate limit
 * (120 a minute of its time) is never near.
 */
async function printAttempts(
  api: Client,
  deliveries: EmitResult['deliveries'],
  values: Values,
  io: Io,
  signal: AbortSignal,
): Promise<number> {
  const several = new Set(deliveries.map((d) => d.webhookId)).size > 1
  const intervalMs = MIN_POLL_MS * deliveries.length
  const options = { values, io, signal, intervalMs, several }
  const outcomes = await Promise.allSettled(deliveries.map((d) => followOne(api, d, options)))
  const failure = outcomes.find((o) => o.status === 'rejected')
  if (failure) throw failure.reason
  return outcomes.every((o) => o.status === 'fulfilled' && o.value) ? EXIT.ok : EXIT.failed
}

export const trigger = manageCommand({
  name: 'trigger',
  summary: 'make the emulator emit a conversion event; --wait shows its delivery',
  usage: [
    `trigger conversion.created [--conversion-id ID] [--status STATUS] [--program-id ID]
                 [--channel-id ID] [--commission AMOUNT] [--sale-amount AMOUNT] [--currency CODE] [--wait]`,
    'trigger conversion.updated --conversion-id ID --status STATUS [--commission AMOUNT] ... [--wait]',
  ],
  about: `Reports a conversion to the emulator at $AFFILIATE_API_URL (POST /emulator/conversions),
which emits the event to every active endpoint subscribed to it. A new
conversion id gives conversion.created, a new status of a known one
conversion.updated, the same status nothing (as the service). An update keeps
the amounts, program and channel it had unless you pass them. Prints the event
id; with --wait, follows each delivery until it succeeds, fails for good (all
eight attempts) or --timeout ends: one line per attempt as it is made, naming
its endpoint when the event went to several, and when a retry is due. Move the
emulator's clock meanwhile to see the retries sooner: ${BIN} emulator clock +5m.`,
  options: {
    'conversion-id': flag.number('ID', 'the conversion (default: a new random id)', {
      min: 1,
      integer: true,
    }),
    status: flag.text('STATUS', `${CONVERSION_STATUSES.join(', ')} (default pending)`),
    'program-id': flag.number('ID', 'program earned on (default: one that exists)', {
      min: 1,
      integer: true,
    }),
    'channel-id': flag.number('ID', 'channel that sent the click (default: the first)', {
      min: 1,
      integer: true,
    }),
    commission: flag.text('AMOUNT', "the publisher's share, e.g. 4.20"),
    'sale-amount': flag.text('AMOUNT', 'the order value, e.g. 60.00'),
    currency: flag.text('CODE', 'ISO 4217 code of both amounts, e.g. EUR'),
    wait: flag.bool('follow each delivery to its end, printing every attempt'),
    timeout: flag.text(
      'DURATION',
      'longest --wait (default 2m: deliveries go out in minute batches)',
    ),
  },
  footer: `Examples:
  ${BIN} trigger conversion.created --commission 4.20 --currency EUR --wait
  ${BIN} trigger conversion.updated --conversion-id 123 --status approved

${MANAGE_FOOTER.replace('the endpoint or delivery is not healthy', 'no event, or a delivery attempt failed')}`,
  async run(values, io, positionals) {
    const type = onlyArgument(positionals, `event type (${TYPES.join(' or ')})`)
    if (!(TYPES as readonly string[]).includes(type)) {
      throw new UsageError(`event type must be ${TYPES.join(' or ')}, not "${type}"`)
    }
    const input = conversionOf(type, values)
    const timeoutMs = parseDuration('timeout', str(values, 'timeout') ?? '2m')
    return withClient('trigger', values, io, async (api) => {
      const result = await api.emulator.emitConversion(input)
      const { event, deliveries } = result
      // With --json every line is one JSON object: this one, then (--wait) each attempt.
      if (values.json) io.stdout.write(`${JSON.stringify({ conversionId: input.id, ...result })}\n`)
      else if (event === null)
        io.stdout.write(`conversion ${input.id} already has status ${input.status}: no event\n`)
      else {
        const to = deliveries.map((d) => `${d.id} to ${d.webhookId}`).join(', ')
        io.stdout.write(
          `${event.type} ${event.id} (conversion ${input.id}): ${deliveries.length ? `delivery ${to}` : 'no active endpoint subscribes to it'}\n`,
        )
      }
      if (event === null || event.type !== type) {
        if (event !== null)
          io.stderr.write(
            `note: conversion ${input.id} existed before, so the event is ${event.type}\n`,
          )
        return EXIT.failed
      }
      if (!values.wait) return EXIT.ok
      return interruptible(io, (signal) => {
        const waiting = AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)])
        return printAttempts(api, deliveries, values, io, waiting).catch((error) => {
          if (!waiting.aborted) throw error
          if (signal.aborted) return EXIT.interrupted
          io.stdout.write('--timeout ended the wait; the emulator keeps trying what is not done\n')
          return EXIT.failed
        })
      })
    })
  },
})

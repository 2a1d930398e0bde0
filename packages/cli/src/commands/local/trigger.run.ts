import type { Client } from '@affiliate-webhooks/client'
import {
  type AttemptSeen,
  type ConversionInput,
  type EmitResult,
  followDeliveryAttempts,
  MIN_POLL_MS,
} from '@affiliate-webhooks/client/internal'
import { CONVERSION_EVENT_TYPES } from '@affiliate-webhooks/core'
import { isWrongRoute, randomConversionId } from '@affiliate-webhooks/emulator/internal'
import type { Handler, ValuesOf } from '../../framework/command.js'
import { EXIT, type Io, interruptible, UsageError } from '../../framework/io.js'
import { nextAttemptIn } from '../../text/local/emulator-send-text.js'
import { formatFollowEvent } from '../../text/service/endpoint-text.js'
import { writeRouteHint } from '../support/hints.js'
import { onlyArgument, parseDuration, withClient } from '../support/service-command.js'
import type { trigger } from './trigger.js'

/** The flags of `trigger`, typed from its declaration. */
type TriggerValues = ValuesOf<typeof trigger.options>

const TYPES = CONVERSION_EVENT_TYPES
const FIELDS = [
  ['commission', 'commission'],
  ['sale-amount', 'saleAmount'],
  ['currency', 'currency'],
] as const

/** The conversion the flags describe; a flag not given is left out, so the emulator keeps its earlier value. */
function conversionOf(type: string, values: TriggerValues): ConversionInput {
  const given = values['conversion-id']
  if (type === 'conversion.updated' && given === undefined) {
    throw new UsageError('an update needs --conversion-id ID of a conversion triggered before')
  }
  if (type === 'conversion.updated' && values.status === undefined) {
    throw new UsageError('an update is a change of status: pass --status STATUS')
  }
  const input: ConversionInput = {
    id: given ?? randomConversionId(),
    status: values.status ?? 'pending',
  }
  const programId = values['program-id']
  const channelId = values['channel-id']
  if (programId !== undefined) input.programId = programId
  if (channelId !== undefined) input.channelId = channelId
  // The emulator checks status, amounts and currency: 400, naming each field.
  for (const [flag, field] of FIELDS) {
    const text = values[flag]
    if (text !== undefined) input[field] = text
  }
  return input
}

/**
 * One delivery followed to its end: each attempt as a line, once, in the order
 * made, from the emulator's attempt log; true when it succeeded.
 */
async function followOne(
  api: Client,
  delivery: EmitResult['deliveries'][number],
  options: {
    values: TriggerValues
    io: Io
    signal: AbortSignal
    intervalMs: number
    several: boolean
  },
): Promise<boolean> {
  const { values, io, signal, intervalMs, several } = options
  let hinted = false
  const following = { signal, intervalMs }
  const attempts = followDeliveryAttempts(api, delivery.webhookId, delivery.id, following)
  let last: AttemptSeen | undefined
  for (;;) {
    const next = await attempts.next()
    if (next.done) {
      // Failed without an attempt of its own: due while its endpoint was disabled.
      if (next.value === 'failed' && last?.status !== 'failed' && !values.json) {
        io.stdout.write(
          `${delivery.id} failed with no further attempt (its endpoint is disabled)\n`,
        )
      }
      return next.value === 'succeeded'
    }
    const seen = next.value
    last = seen
    const line = values.json ? JSON.stringify(seen) : formatAttempt(seen, several)
    io.stdout.write(`${line}\n`)
    if (!hinted && isWrongRoute(seen.responseStatus)) {
      hinted = true
      const { url } = await api.webhooks.get(delivery.webhookId, { signal })
      await writeRouteHint(io, url, seen.responseStatus as number)
    }
  }
}

/**
 * An attempt line, stamped with this machine's clock; with several endpoints it
 * names its endpoint; a retry says how long until the next attempt, in service time.
 */
const formatAttempt = (seen: AttemptSeen, several: boolean) =>
  `${formatFollowEvent(seen, { endpoint: several })}${seen.status === 'retrying' ? `  ${nextAttemptIn(seen.attempt)}` : ''}`

/**
 * `--wait`: every delivery followed at once until it succeeds, fails for good or
 * the wait ends; the route hint after a 404 or 405. Each delivery's attempt log
 * (not counted) is read once a look, and the delivery itself only when a look
 * found nothing new; the looks are spaced so the emulator's rate limit (120 a
 * minute of its time) is never near.
 */
async function printAttempts(
  api: Client,
  deliveries: EmitResult['deliveries'],
  values: TriggerValues,
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

/** Runs `trigger`. */
export const run: Handler<typeof trigger.options> = async (values, io, positionals) => {
  const type = onlyArgument(positionals, `event type (${TYPES.join(' or ')})`)
  if (!(TYPES as readonly string[]).includes(type)) {
    throw new UsageError(`event type must be ${TYPES.join(' or ')}, not "${type}"`)
  }
  const input = conversionOf(type, values)
  const timeoutMs = parseDuration('timeout', values.timeout ?? '2m')
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
}

import { buildConversionEvent, buildTestEvent } from '@affiliate-webhooks/core/testing'
import {
  ANSWER_TIMEOUT_MS,
  deliveryHeaders,
  describeEvent,
  MAX_ATTEMPTS,
  sendAttempt,
} from '@affiliate-webhooks/emulator'
import { COMMON, type Command, str, type Values } from './command.js'
import {
  checkSecretShape,
  EXIT,
  type Io,
  parseNumber,
  readBody,
  requireSecret,
  requireUrl,
  UsageError,
  writeJson,
} from './io.js'

const TYPES = ['conversion.created', 'conversion.updated', 'webhook.test'] as const
const STATUSES = ['pending', 'approved', 'available', 'ready_for_payout', 'rejected']

function buildBody(values: Values, io: Io): string {
  const type = str(values, 'type')
  const status = str(values, 'status')
  const conversionId = str(values, 'conversion-id')
  if (type !== undefined && !(TYPES as readonly string[]).includes(type)) {
    throw new UsageError(`--type must be one of ${TYPES.join(', ')}, not "${type}"`)
  }
  if (status !== undefined && !STATUSES.includes(status)) {
    // The receiver accepts statuses the spec may add later, so this is a note, not an error.
    io.stderr.write(`note: "${status}" is not one of ${STATUSES.join(', ')}\n`)
  }
  const resolvedType =
    type ??
    (status === undefined || status === 'pending' ? 'conversion.created' : 'conversion.updated')
  if (resolvedType === 'webhook.test') {
    if (status !== undefined || conversionId !== undefined) {
      throw new UsageError(
        '--status and --conversion-id apply to conversion events, not webhook.test',
      )
    }
    return JSON.stringify(buildTestEvent())
  }
  const id = parseNumber('conversion-id', conversionId, 100_000 + Math.floor(Math.random() * 9e8), {
    min: 1,
    integer: true,
  })
  return JSON.stringify(
    buildConversionEvent({
      type: resolvedType as 'conversion.created' | 'conversion.updated',
      conversion: {
        id,
        status: status ?? (resolvedType === 'conversion.created' ? 'pending' : 'approved'),
      },
    }),
  )
}

const verdict = (status: number, ok: boolean) =>
  ok
    ? 'acknowledged'
    : status >= 300 && status < 400
      ? 'redirect, not followed: a failure, the service would retry'
      : 'not acknowledged: the service would retry'

export const send: Command = {
  name: 'send',
  summary: 'send one signed event to a URL and print the answer',
  help: `Usage: affiliate-webhooks send --url URL [--type TYPE] [--status STATUS] [--conversion-id N]
                               [--body FILE] [--secret SECRET] [--attempt N] [--json]

Sends one delivery exactly as the service does: POST, Content-Type, Service-Event-Id,
Service-Delivery-Attempt and a fresh Service-Signature. Prints the status and answer.
A 2xx within the timeout is a success; anything else (non-2xx, redirect, timeout,
connection error) is a failure, as the service counts it.

  --url URL            the receiver's webhook URL (required)
  --type TYPE          conversion.created, conversion.updated or webhook.test
                       (default: conversion.created, or .updated when --status is not pending)
  --status STATUS      the conversion's status: pending, approved, available,
                       ready_for_payout, rejected
  --conversion-id N    the conversion's id (default random)
  --body FILE          send this exact body instead ("-" reads stdin)
  --secret SECRET      endpoint secret (whsec_...); default $AFFILIATE_WEBHOOK_SECRET
  --attempt N          Service-Delivery-Attempt, 1 to 8 (default 1)
  --timestamp UNIX     sign as of this Unix time (default now), to test clock checks
  --timeout MS         how long to wait for the answer (default ${ANSWER_TIMEOUT_MS}, the service's limit)
  --json               print the attempt as JSON

Examples:
  affiliate-webhooks send --url http://localhost:3000/hooks --status approved --conversion-id 1001
  affiliate-webhooks send --url http://localhost:3000/hooks --type webhook.test

Exit codes: 0 answered 2xx, 1 any other outcome, 2 wrong usage.`,
  options: {
    ...COMMON,
    url: { type: 'string' },
    type: { type: 'string' },
    status: { type: 'string' },
    'conversion-id': { type: 'string' },
    body: { type: 'string' },
    attempt: { type: 'string' },
    timestamp: { type: 'string' },
    timeout: { type: 'string' },
  },
  async run(values, io) {
    const url = requireUrl(str(values, 'url'))
    const secret = requireSecret(str(values, 'secret'), io)
    const attempt = parseNumber('attempt', str(values, 'attempt'), 1, {
      min: 1,
      max: MAX_ATTEMPTS,
      integer: true,
    })
    const timeoutMs = parseNumber('timeout', str(values, 'timeout'), ANSWER_TIMEOUT_MS, { min: 1 })
    const timestampFlag = str(values, 'timestamp')
    const timestamp =
      timestampFlag === undefined
        ? undefined
        : parseNumber('timestamp', timestampFlag, 0, { min: 0, integer: true })
    const bodyPath = str(values, 'body')
    if (bodyPath !== undefined && ['type', 'status', 'conversion-id'].some((f) => f in values)) {
      throw new UsageError(
        '--body sends a body as is; leave out --type, --status and --conversion-id',
      )
    }
    // A body file is sent byte for byte, BOM or odd encoding included.
    const body: string | Uint8Array =
      bodyPath === undefined ? buildBody(values, io) : await readBody(bodyPath, io)
    checkSecretShape(secret, io)
    const text = typeof body === 'string' ? body : new TextDecoder().decode(body)
    const event = describeEvent(text)
    const headers = await deliveryHeaders({
      secret,
      body,
      attempt,
      eventId: event.eventId,
      ...(timestamp === undefined ? {} : { timestamp }),
    })
    const result = await sendAttempt({ url, headers, body, timeoutMs })
    if (values.json) {
      writeJson(io, { url, ...event, attempt, request: { headers, body: text }, ...result })
    } else {
      const what = event.eventType
        ? `${event.eventType} ${event.eventId}${event.conversionId === undefined ? '' : ` (conversion ${event.conversionId})`}`
        : 'body'
      io.stdout.write(`POST ${url}  ${what}, attempt ${attempt}\n`)
      io.stdout.write(
        result.responseStatus !== undefined && result.errorMessage === undefined
          ? `${result.responseStatus} ${verdict(result.responseStatus, result.ok)} in ${Math.round(result.durationMs)} ms\n`
          : `no answer: ${result.errorMessage} (${Math.round(result.durationMs)} ms); the service would retry\n`,
      )
      if (result.responseBody) io.stdout.write(`${result.responseBody}\n`)
    }
    return result.ok ? EXIT.ok : EXIT.failed
  },
}

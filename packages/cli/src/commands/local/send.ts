import { CONVERSION_STATUSES, signPayload } from '@affiliate-webhooks/core'
import { ANSWER_TIMEOUT_MS, MAX_ATTEMPTS } from '@affiliate-webhooks/emulator'
import {
  bodyOf,
  deliveryHeaders,
  describeEvent,
  isWrongRoute,
  resendHeaders,
  SAMPLE_EVENT_TYPES,
  type SampleEventOptions,
  sampleEventBody,
  sendAttempt,
} from '@affiliate-webhooks/emulator/internal'
import {
  COMMON,
  type Command,
  flag,
  num,
  str,
  type Values,
  VERSION,
} from '../../framework/command.js'
import {
  checkSecretShape,
  EXIT,
  type Io,
  readInputFile,
  refuseFlags,
  requireSecret,
  requireUrl,
  UsageError,
  writeJson,
} from '../../framework/io.js'
import { attemptOutcome } from '../../text/local/emulator-send-text.js'
import { readCaptureFile } from '../support/capture-file.js'
import { writeHint, writeRouteHint } from '../support/hints.js'

/** `--created-at`: an ISO 8601 time with its zone, as the service writes createdAt. */
function parseCreatedAt(text: string | undefined): string | undefined {
  if (text === undefined) return undefined
  if (
    !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(text) ||
    !Number.isFinite(Date.parse(text))
  ) {
    throw new UsageError(
      `--created-at must be an ISO 8601 time with a zone, e.g. 2026-11-20T09:15:00Z, not "${text}"`,
    )
  }
  return new Date(text).toISOString()
}

/** The sample event the flags describe; a wrong --type or flag mix is a usage error. */
function buildBody(values: Values, io: Io): string {
  // A wrong --created-at is reported first, before --type and the --status note.
  const createdAt = parseCreatedAt(str(values, 'created-at'))
  const type = str(values, 'type')
  const status = str(values, 'status')
  if (type !== undefined && !(SAMPLE_EVENT_TYPES as readonly string[]).includes(type)) {
    throw new UsageError(`--type must be one of ${SAMPLE_EVENT_TYPES.join(', ')}, not "${type}"`)
  }
  if (status !== undefined && !(CONVERSION_STATUSES as readonly string[]).includes(status)) {
    // The receiver accepts statuses the spec may add later, so this is a note, not an error.
    io.stderr.write(`note: "${status}" is not one of ${CONVERSION_STATUSES.join(', ')}\n`)
  }
  try {
    return sampleEventBody({
      type: type as SampleEventOptions['type'],
      status,
      conversionId: num(values, 'conversion-id'),
      createdAt,
    })
  } catch (error) {
    if (!(error instanceof TypeError)) throw error
    throw new UsageError(
      '--status and --conversion-id apply to conversion events, not webhook.test',
    )
  }
}

export const send: Command = {
  name: 'send',
  summary: 'send one signed event to a URL and print the answer',
  usage: [
    `send --url URL [--type TYPE] [--status STATUS] [--conversion-id N]
                               [--created-at ISO] [--body FILE] [--secret SECRET] [--attempt N] [--json]`,
    'send --from FILE [--url] URL [--resign --secret SECRET]',
  ],
  about: `Sends one delivery exactly as the service does: POST, Content-Type, Service-Event-Id,
Service-Delivery-Attempt and a fresh Service-Signature. Prints the status and answer.
A 2xx within the timeout is a success; anything else (non-2xx, redirect, timeout,
connection error) is a failure, as the service counts it.`,
  options: {
    url: flag.text('URL', "the receiver's webhook URL (required)"),
    type: flag.text(
      'TYPE',
      `${SAMPLE_EVENT_TYPES.join(', ').replace(/, (?=[^,]*$)/, ' or ')}\n(default: conversion.created, or .updated when --status is not pending)`,
    ),
    status: flag.text(
      'STATUS',
      `the conversion's status, one of\n${CONVERSION_STATUSES.join(', ')}`,
    ),
    'conversion-id': flag.number('N', "the conversion's id (default random)", {
      min: 1,
      integer: true,
    }),
    body: flag.text('FILE', 'send this exact body instead ("-" reads stdin)'),
    ...COMMON,
    attempt: flag.number('N', 'Service-Delivery-Attempt, 1 to 8 (default 1)', {
      min: 1,
      max: MAX_ATTEMPTS,
      integer: true,
    }),
    timestamp: flag.number(
      'UNIX',
      'sign as of this Unix time (default now), to test clock checks',
      { min: 0, integer: true },
    ),
    'created-at': flag.text(
      'ISO',
      "the event's createdAt (default now), to reproduce out-of-order\narrivals: an update created earlier than one handled is stale",
    ),
    timeout: flag.number(
      'MS',
      `how long to wait for the answer (default ${ANSWER_TIMEOUT_MS}, the service's limit)`,
      { min: 1 },
    ),
    from: flag.text(
      'FILE',
      're-send a delivery saved by listen --save: its headers and\nexact body, original signature included (a receiver refuses\nit once the signature is over 5 minutes old: add --resign)',
    ),
    resign: flag.bool('with --from: sign again now with --secret (same body and event id)'),
    json: flag.bool('print the attempt as JSON'),
  },
  footer: `Examples:
  affiliate-webhooks send --url http://localhost:3000/hooks --status approved --conversion-id 1001
  affiliate-webhooks send --url http://localhost:3000/hooks --type webhook.test
  affiliate-webhooks send --from captures/20261123T091500-123Z-evt_ab12-1.json http://localhost:3000/hooks

Exit codes: 0 answered 2xx, 1 any other outcome, 2 wrong usage.`,
  positionals: true,
  async run(values, io, positionals) {
    if (positionals.length > 1 || (positionals.length === 1 && str(values, 'url') !== undefined)) {
      throw new UsageError(`unexpected argument ${positionals.at(-1)}`)
    }
    const url = requireUrl(str(values, 'url') ?? positionals[0])
    const timeoutMs = num(values, 'timeout') ?? ANSWER_TIMEOUT_MS
    const from = str(values, 'from')
    if (from !== undefined) return resend(from, url, timeoutMs, values, io)
    if (values.resign) throw new UsageError('--resign goes with --from')
    const secret = requireSecret(str(values, 'secret'), io)
    const attempt = num(values, 'attempt') ?? 1
    const timestamp = num(values, 'timestamp')
    const bodyPath = str(values, 'body')
    if (
      bodyPath !== undefined &&
      ['type', 'status', 'conversion-id', 'created-at'].some((f) => f in values)
    ) {
      throw new UsageError(
        '--body sends a body as is; leave out --type, --status, --conversion-id and --created-at',
      )
    }
    // A body file is sent byte for byte, BOM or odd encoding included.
    const body: string | Uint8Array =
      bodyPath === undefined ? buildBody(values, io) : await readInputFile(bodyPath, io)
    checkSecretShape(secret, io)
    const event = describeEvent(typeof body === 'string' ? body : new TextDecoder().decode(body))
    const headers = await deliveryHeaders({
      secret,
      body,
      attempt,
      eventId: event.eventId,
      ...(timestamp === undefined ? {} : { timestamp }),
      // The CLI sends this one, not the engine: its own User-Agent.
      extra: { 'User-Agent': `affiliate-webhooks-cli/${VERSION}` },
    })
    return deliver({ url, headers, body, timeoutMs, attempt }, values, io)
  },
}

/** Sends one attempt and prints it; the exit code says whether it was acknowledged. */
async function deliver(
  request: {
    url: string
    headers: Record<string, string>
    body: string | Uint8Array
    timeoutMs: number
    attempt: number | string
  },
  values: Values,
  io: Io,
): Promise<number> {
  const { url, headers, body, timeoutMs, attempt } = request
  const text = typeof body === 'string' ? body : new TextDecoder().decode(body)
  const event = describeEvent(text)
  const result = await sendAttempt({ url, headers, body, timeoutMs })
  if (values.json) {
    writeJson(io, { url, ...event, attempt, request: { headers, body: text }, ...result })
  } else {
    const what = event.eventType
      ? `${event.eventType} ${event.eventId}${event.conversionId === undefined ? '' : ` (conversion ${event.conversionId})`}`
      : 'body'
    io.stdout.write(`POST ${url}  ${what}, attempt ${attempt}\n`)
    io.stdout.write(`${attemptOutcome(result, attempt)}\n`)
    if (result.responseBody) io.stdout.write(`${result.responseBody}\n`)
  }
  if (isWrongRoute(result.responseStatus)) {
    await writeRouteHint(io, url, result.responseStatus as number)
  } else if (!result.ok)
    writeHint(io, 'app', `${result.errorMessage ?? ''} ${result.responseBody ?? ''}`)
  return result.ok ? EXIT.ok : EXIT.failed
}

/** `send --from FILE`: a saved delivery again, byte for byte, with its own headers. */
async function resend(path: string, url: string, timeoutMs: number, values: Values, io: Io) {
  const saved = ['type', 'status', 'conversion-id', 'body', 'created-at', 'attempt', 'timestamp']
  refuseFlags(values, saved, '--from re-sends the saved delivery as it was')
  const capture = await readCaptureFile(path)
  const body = bodyOf(capture)
  const headers = resendHeaders(capture)
  if (values.resign) {
    const secret = requireSecret(str(values, 'secret'), io)
    checkSecretShape(secret, io)
    headers['service-signature'] = await signPayload({ secret, payload: body })
  }
  return deliver(
    { url, headers, body, timeoutMs, attempt: headers['service-delivery-attempt'] ?? '-' },
    values,
    io,
  )
}

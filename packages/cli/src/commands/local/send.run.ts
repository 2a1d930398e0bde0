import { CONVERSION_STATUSES, signPayload } from '@affiliate-webhooks/core'
import { ANSWER_TIMEOUT_MS } from '@affiliate-webhooks/emulator'
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
import type { Handler, ValuesOf } from '../../framework/command.js'
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
import { VERSION } from '../../version.js'
import { readCaptureFile } from '../support/capture-file.js'
import { writeHint, writeRouteHint } from '../support/hints.js'
import type { send } from './send.js'

/** The flags of `send`, typed from its declaration. */
type SendValues = ValuesOf<typeof send.options>

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
function buildBody(values: SendValues, io: Io): string {
  // A wrong --created-at is reported first, before --type and the --status note.
  const createdAt = parseCreatedAt(values['created-at'])
  const type = values.type
  const status = values.status
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
      conversionId: values['conversion-id'],
      createdAt,
    })
  } catch (error) {
    if (!(error instanceof TypeError)) throw error
    throw new UsageError(
      '--status and --conversion-id apply to conversion events, not webhook.test',
    )
  }
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
  values: SendValues,
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
    writeHint(
      io,
      'app',
      `${result.errorMessage ?? ''} ${result.responseBody ?? ''}`,
      result.responseStatus ?? undefined,
    )
  return result.ok ? EXIT.ok : EXIT.failed
}

/** `send --from FILE`: a saved delivery again, byte for byte, with its own headers. */
async function resend(path: string, url: string, timeoutMs: number, values: SendValues, io: Io) {
  const saved = ['type', 'status', 'conversion-id', 'body', 'created-at', 'attempt', 'timestamp']
  refuseFlags(values, saved, '--from re-sends the saved delivery as it was')
  const capture = await readCaptureFile(path)
  const body = bodyOf(capture)
  const headers = resendHeaders(capture)
  if (values.resign) {
    const secret = requireSecret(values.secret, io)
    checkSecretShape(secret, io)
    headers['service-signature'] = await signPayload({ secret, payload: body })
  }
  return deliver(
    { url, headers, body, timeoutMs, attempt: headers['service-delivery-attempt'] ?? '-' },
    values,
    io,
  )
}

/** Runs `send`. */
export const run: Handler<typeof send.options> = async (values, io, positionals) => {
  if (positionals.length > 1 || (positionals.length === 1 && values.url !== undefined)) {
    throw new UsageError(`unexpected argument ${positionals.at(-1)}`)
  }
  const url = requireUrl(values.url ?? positionals[0])
  const timeoutMs = values.timeout ?? ANSWER_TIMEOUT_MS
  const from = values.from
  if (from !== undefined) return resend(from, url, timeoutMs, values, io)
  if (values.resign) throw new UsageError('--resign goes with --from')
  const secret = requireSecret(values.secret, io)
  const attempt = values.attempt ?? 1
  const timestamp = values.timestamp
  const bodyPath = values.body
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
}

import { DEFAULT_TOLERANCE_SECONDS, diagnoseSignature } from '@affiliate-webhooks/core'
import { bodyOf } from '@affiliate-webhooks/emulator'
import { COMMON, type Command, num, str } from './command.js'
import { EXIT, readBody, readCaptureFile, requireSecret, UsageError, writeJson } from './io.js'

export const verify: Command = {
  name: 'verify',
  summary: 'check a captured Service-Signature and body, and say why they fail',
  usage: [
    'verify --header VALUE [--body FILE] [--secret SECRET] [--json]',
    'verify --from FILE [--secret SECRET] [--json]',
  ],
  about: `Checks a captured delivery with the same verification the receivers run and,
when it fails, finds the likely reason: wrong secret, secret used without its
whsec_ prefix, body changed (re-serialised JSON, trailing newline, CRLF, BOM,
encoding), timestamp outside the tolerance (and by how much), malformed header.`,
  options: {
    header: {
      type: 'string',
      value: 'VALUE',
      help: 'the Service-Signature value, e.g. "t=1763719200,v1=5f2c..." (required)',
    },
    body: {
      type: 'string',
      value: 'FILE',
      help: 'the body exactly as received; "-" or no flag reads stdin',
    },
    ...COMMON,
    'event-id': {
      type: 'string',
      value: 'ID',
      help: 'the Service-Event-Id header, to check it against the body',
    },
    from: {
      type: 'string',
      value: 'FILE',
      help: 'a delivery saved by listen --save: its header, event id and\nexact body (instead of --header, --body, --event-id)',
    },
    tolerance: {
      type: 'string',
      number: { min: 0 },
      value: 'S',
      help: `seconds of clock difference accepted (default ${DEFAULT_TOLERANCE_SECONDS})`,
    },
    now: {
      type: 'string',
      number: { min: 0 },
      value: 'UNIX',
      help: 'check the timestamp as of this Unix time (default now)',
    },
    json: {
      type: 'boolean',
      help: 'print {"verified", "code", "message", "causes", "hints", ...}',
    },
  },
  footer: `Examples:
  affiliate-webhooks verify --header "$SIG" --body captured.json
  pbpaste | affiliate-webhooks verify --header "t=1763719200,v1=5f2c..."
  affiliate-webhooks verify --from captures/20261123T091500-123Z-evt_ab12-1.json

Exit codes: 0 verifies, 1 does not verify, 2 wrong usage.`,
  async run(values, io) {
    const from = str(values, 'from')
    let captured: { header: string; body: Uint8Array; eventId: string | undefined } | undefined
    if (from !== undefined) {
      const clash = ['header', 'body', 'event-id'].filter((flag) => flag in values)
      if (clash.length > 0)
        throw new UsageError(`--from brings its own; leave out --${clash.join(', --')}`)
      const capture = await readCaptureFile(from)
      const header = capture.headers['service-signature']
      if (header === undefined) {
        throw new UsageError(`${from} has no Service-Signature header: that request was not signed`)
      }
      captured = { header, body: bodyOf(capture), eventId: capture.headers['service-event-id'] }
    }
    const header = captured?.header ?? str(values, 'header')
    if (header === undefined) {
      throw new UsageError(
        '--header is required: the captured Service-Signature value (or --from FILE)',
      )
    }
    const secret = requireSecret(str(values, 'secret'), io)
    const tolerance = num(values, 'tolerance') ?? DEFAULT_TOLERANCE_SECONDS
    const nowSeconds = num(values, 'now')
    const now = nowSeconds === undefined ? Date.now() : nowSeconds * 1000
    const eventId = captured ? captured.eventId : str(values, 'event-id')
    const body = captured?.body ?? (await readBody(str(values, 'body'), io))
    const diagnosis = await diagnoseSignature({
      header,
      body,
      secret,
      tolerance,
      now,
      ...(eventId === undefined ? {} : { eventId }),
    })
    if (values.json) {
      writeJson(io, diagnosis)
    } else {
      const lines = diagnosis.verified
        ? [`verified: ${diagnosis.event?.type} ${diagnosis.event?.id}`]
        : [`does not verify: ${diagnosis.code}`]
      lines.push(`  ${diagnosis.message}`)
      if (diagnosis.causes.length > 1) lines.push(`  causes: ${diagnosis.causes.join(', ')}`)
      for (const hint of diagnosis.hints) lines.push(`  - ${hint}`)
      io.stdout.write(`${lines.join('\n')}\n`)
    }
    return diagnosis.verified ? EXIT.ok : EXIT.failed
  },
}

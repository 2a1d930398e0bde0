import { diagnoseSignature } from '@affiliate-webhooks/core'
import { DEFAULT_TOLERANCE_SECONDS } from '@affiliate-webhooks/core/internal'
import { bodyOf } from '@affiliate-webhooks/emulator/internal'
import { COMMON, type Command, flag, num, str } from '../../framework/command.js'
import {
  EXIT,
  output,
  readInputFile,
  refuseFlags,
  requireSecret,
  UsageError,
} from '../../framework/io.js'
import { formatDiagnosis } from '../../text/local/diagnosis-text.js'
import { readCaptureFile } from '../support/capture-file.js'

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
    header: flag.text(
      'VALUE',
      'the Service-Signature value, e.g. "t=1763719200,v1=5f2c..." (required)',
    ),
    body: flag.text('FILE', 'the body exactly as received; "-" or no flag reads stdin'),
    ...COMMON,
    'event-id': flag.text('ID', 'the Service-Event-Id header, to check it against the body'),
    from: flag.text(
      'FILE',
      'a delivery saved by listen --save: its header, event id and\nexact body (instead of --header, --body, --event-id)',
    ),
    tolerance: flag.number(
      'S',
      `seconds of clock difference accepted (default ${DEFAULT_TOLERANCE_SECONDS})`,
      { min: 0 },
    ),
    now: flag.number('UNIX', 'check the timestamp as of this Unix time (default now)', { min: 0 }),
    json: flag.bool('print {"verified", "code", "message", "causes", "hints", ...}'),
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
      refuseFlags(values, ['header', 'body', 'event-id'], '--from brings its own')
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
    const body = captured?.body ?? (await readInputFile(str(values, 'body'), io))
    const diagnosis = await diagnoseSignature({
      header,
      body,
      secret,
      tolerance,
      now,
      ...(eventId === undefined ? {} : { eventId }),
    })
    output(io, values, diagnosis, formatDiagnosis(diagnosis))
    return diagnosis.verified ? EXIT.ok : EXIT.failed
  },
}

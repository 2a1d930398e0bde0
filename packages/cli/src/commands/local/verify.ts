import { DEFAULT_TOLERANCE_SECONDS } from '@affiliate-webhooks/core/internal'
import { COMMON, defineCommand, flag } from '../../framework/command.js'

export const verify = defineCommand({
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
})

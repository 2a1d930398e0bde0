import { COMMON, defineCommand, flag } from '../../framework/command.js'

export const sign = defineCommand({
  usage: ['sign [--body FILE] [--secret SECRET] [--timestamp UNIX] [--json]'],
  about: `Prints the Service-Signature header value the service would send with this body:
t=<unix time>,v1=<hex HMAC-SHA256 of "t.body", keyed with the whole secret>.`,
  options: {
    body: flag.text('FILE', 'the exact body to sign; "-" or no flag reads stdin'),
    ...COMMON,
    timestamp: flag.number('UNIX', 'sign as of this Unix time in seconds (default now)', {
      min: 0,
      integer: true,
    }),
    json: flag.bool('print {"header", "timestamp", "signature"}'),
  },
  footer: `The bytes are signed exactly as read: a trailing newline is part of the body.

Examples:
  affiliate-webhooks sign --body event.json
  printf '%s' '{"id":"evt_1"}' | affiliate-webhooks sign --timestamp 1763719200

Exit codes: 0 printed, 2 wrong usage.`,
})

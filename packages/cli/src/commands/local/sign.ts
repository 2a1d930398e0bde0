import { signPayload } from '@affiliate-webhooks/core'
import { parseSignatureHeader } from '@affiliate-webhooks/core/internal'
import { COMMON, type Command, flag, num, str } from '../../framework/command.js'
import {
  checkSecretShape,
  EXIT,
  readInputFile,
  requireSecret,
  writeJson,
} from '../../framework/io.js'

export const sign: Command = {
  name: 'sign',
  summary: 'print the Service-Signature for a body and secret',
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
  async run(values, io) {
    const secret = requireSecret(str(values, 'secret'), io)
    const timestamp = num(values, 'timestamp') ?? Math.floor(Date.now() / 1000)
    const body = await readInputFile(str(values, 'body'), io)
    checkSecretShape(secret, io)
    if (body.at(-1) === 0x0a) {
      io.stderr.write(
        'note: the body ends with a newline, which is signed too; the service sends no trailing newline.\n',
      )
    }
    const header = await signPayload({ secret, payload: body, timestamp })
    if (values.json) {
      writeJson(io, { header, timestamp, signature: parseSignatureHeader(header).signatures[0] })
    } else {
      io.stdout.write(`${header}\n`)
    }
    return EXIT.ok
  },
}

import { signPayload } from '@affiliate-webhooks/core'
import { parseSignatureHeader } from '@affiliate-webhooks/core/internal'
import type { Handler } from '../../framework/command.js'
import {
  checkSecretShape,
  EXIT,
  readInputFile,
  requireSecret,
  writeJson,
} from '../../framework/io.js'
import type { sign } from './sign.js'

/** Runs `sign`. */
export const run: Handler<typeof sign.options> = async (values, io) => {
  const secret = requireSecret(values.secret, io)
  const timestamp = values.timestamp ?? Math.floor(Date.now() / 1000)
  const body = await readInputFile(values.body, io)
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
}

import { diagnoseSignature } from '@affiliate-webhooks/core'
import { DEFAULT_TOLERANCE_SECONDS } from '@affiliate-webhooks/core/internal'
import { bodyOf } from '@affiliate-webhooks/emulator/internal'
import type { Handler } from '../../framework/command.js'
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
import type { verify } from './verify.js'

/** Runs `verify`. */
export const run: Handler<typeof verify.options> = async (values, io) => {
  const from = values.from
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
  const header = captured?.header ?? values.header
  if (header === undefined) {
    throw new UsageError(
      '--header is required: the captured Service-Signature value (or --from FILE)',
    )
  }
  const secret = requireSecret(values.secret, io)
  const tolerance = values.tolerance ?? DEFAULT_TOLERANCE_SECONDS
  const nowSeconds = values.now
  const now = nowSeconds === undefined ? Date.now() : nowSeconds * 1000
  const eventId = captured ? captured.eventId : values['event-id']
  const body = captured?.body ?? (await readInputFile(values.body, io))
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
}

import {
  type CapturedDelivery,
  CaptureFileError,
  readCapture,
} from '@affiliate-webhooks/emulator/internal'
import { UsageError } from '../../framework/io.js'

/** A delivery saved by listen --save (`--from FILE`); a file it cannot read is a usage error. */
export async function readCaptureFile(path: string): Promise<CapturedDelivery> {
  try {
    return await readCapture(path)
  } catch (error) {
    if (error instanceof CaptureFileError) throw new UsageError(error.message)
    throw error
  }
}

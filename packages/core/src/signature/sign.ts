import { platform } from '../platform/index.js'
import { formatSignatureHeader } from './signature-header.js'

/** Options of {@link signPayload}. */
export interface SignPayloadOptions {
  /** The endpoint secret, `whsec_` prefix included. */
  secret: string
  /** The exact body to sign: a string (UTF-8) or bytes. */
  payload: string | Uint8Array
  /** Unix time in seconds. Default: now. */
  timestamp?: number
}

/** The `Service-Signature` value for a body: `t=<timestamp>,v1=<hex HMAC-SHA256>`. */
export async function signPayload({
  secret,
  payload,
  timestamp,
}: SignPayloadOptions): Promise<string> {
  const t = timestamp ?? Math.floor(Date.now() / 1000)
  const body = typeof payload === 'string' ? platform.utf8Encode(payload) : payload
  return formatSignatureHeader(t, await platform.sign(secret, `${t}.`, body))
}

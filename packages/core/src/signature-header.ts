import { WebhookError } from './errors.js'

/** Longer headers are refused before any work is done on them. */
export const MAX_SIGNATURE_HEADER_LENGTH = 4096
/** More `v1` values than this are refused: each one costs a comparison. */
export const MAX_SIGNATURES = 8

export interface SignatureHeader {
  /** `t` as a number of seconds. */
  timestamp: number
  /** `t` exactly as sent; it is what was signed. */
  timestampText: string
  /** Every `v1` value, lowercase hex. */
  signatures: string[]
}

const DIGITS = /^\d{1,15}$/
const HEX = /^[0-9a-fA-F]+$/

function malformed(detail: string): WebhookError {
  return new WebhookError(
    'malformed_signature',
    `Service-Signature must look like t=<unix time>,v1=<hex>: ${detail}`,
  )
}

/**
 * Parses `t=<unix time>,v1=<hex>[,v1=<hex>...]`: keys in any order, spaces
 * around parts tolerated, unknown keys ignored. Throws `malformed_signature`.
 */
export function parseSignatureHeader(value: string): SignatureHeader {
  if (value.length > MAX_SIGNATURE_HEADER_LENGTH) {
    throw malformed(`longer than ${MAX_SIGNATURE_HEADER_LENGTH} characters`)
  }
  let timestampText: string | undefined
  const signatures: string[] = []
  for (const rawPart of value.split(',')) {
    const part = rawPart.trim()
    if (part === '') continue
    const eq = part.indexOf('=')
    if (eq === -1) throw malformed(`"${part.slice(0, 20)}" is not key=value`)
    const key = part.slice(0, eq).trim()
    const val = part.slice(eq + 1).trim()
    if (key === 't') {
      if (timestampText !== undefined) throw malformed('t appears twice')
      if (!DIGITS.test(val)) throw malformed('t is not a whole number of seconds')
      timestampText = val
    } else if (key === 'v1') {
      if (!HEX.test(val)) throw malformed('a v1 value is not hex')
      if (signatures.length === MAX_SIGNATURES)
        throw malformed(`more than ${MAX_SIGNATURES} v1 values`)
      signatures.push(val.toLowerCase())
    }
  }
  if (timestampText === undefined) throw malformed('no t')
  if (signatures.length === 0) throw malformed('no v1')
  return { timestamp: Number(timestampText), timestampText, signatures }
}

/** Builds the header value the service sends. */
export function formatSignatureHeader(timestamp: number | string, signature: string): string {
  return `t=${timestamp},v1=${signature}`
}

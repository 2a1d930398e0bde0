import { WebhookError } from '../errors.js'

/**
 * Longer headers are refused (`malformed_signature`) before any work is done on
 * them. Half of Node's default limit for all headers together (16 KiB, its
 * `maxHeaderSize`), so an over-long signature that Node lets through gets this
 * answer; headers past Node's limit are answered 431 by Node itself, before any
 * receiver runs. The service's header is under 200 characters (one `t`, a `v1`
 * or two while rotating).
 */
export const MAX_SIGNATURE_HEADER_LENGTH = 8192

/** A parsed `Service-Signature` header. */
export interface SignatureHeader {
  /** `t` as a number of seconds. */
  timestamp: number
  /** `t` exactly as sent; it is what was signed. */
  timestampText: string
  /** Every `v1` value, lowercase hex. */
  signatures: string[]
}

function malformed(detail: string): WebhookError {
  return new WebhookError(
    'malformed_signature',
    `Service-Signature must look like t=<unix time>,v1=<hex>: ${detail}`,
  )
}

const isSpace = (code: number) => code === 32 || code === 9

enum Hex {
  Invalid = 0,
  Lower = 1,
  Mixed = 2,
}

function hexKind(text: string, from: number, to: number): Hex {
  let kind = Hex.Lower
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i)
    if ((c >= 48 && c <= 57) || (c >= 97 && c <= 102)) continue
    if (c >= 65 && c <= 70) kind = Hex.Mixed
    else return Hex.Invalid
  }
  return kind
}

function allDigits(text: string, from: number, to: number): boolean {
  return wholeNumber(text, from, to) >= 0
}

/**
 * The number written in decimal digits from `from` to `to` (at most 15, so it is
 * exact), or -1 if any character is not a digit. Read here rather than by
 * `Number(text)`, which first checks whether the string is an array index.
 */
function wholeNumber(text: string, from: number, to: number): number {
  let value = 0
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i)
    if (c < 48 || c > 57) return -1
    value = value * 10 + (c - 48)
  }
  return value
}

/**
 * Parses `t=<unix time>,v1=<hex>[,v1=<hex>...]`: keys in any order, spaces
 * around parts tolerated; unknown keys, parts without `=` and v1 values that are
 * not hex ignored; `t` repeated with the same text taken once. Throws
 * `malformed_signature` when there is no usable `t` (none, not whole seconds, or
 * two different ones), no hex `v1`, or more than
 * {@link MAX_SIGNATURE_HEADER_LENGTH} characters.
 * One pass over the characters: this runs on every request, before anything
 * is known about the sender.
 */
export function parseSignatureHeader(value: string): SignatureHeader {
  return canonical(value) ?? parseAnyOrder(value)
}

/** A header as the service sends it, its `v1` not yet checked to be hex. */
export interface CanonicalHeader {
  timestamp: number
  timestampText: string
  /** The 64 characters after `v1=`: hex only if the sender made it so. */
  v1: string
}

/**
 * The header in the shape the service sends, `t=<digits>,v1=<64 characters>`,
 * read without the general loop; anything else returns undefined. Whether the
 * 64 characters are hex is left to the caller: the receiver's platform finds out
 * while decoding them, which it must do anyway (in native code on Node).
 */
export function canonicalHeader(value: string): CanonicalHeader | undefined {
  const comma = value.indexOf(',')
  const length = value.length
  if (
    length - comma !== 68 ||
    comma < 3 ||
    comma > 17 ||
    value.charCodeAt(0) !== 116 /* t */ ||
    value.charCodeAt(1) !== 61 /* = */ ||
    value.charCodeAt(comma + 1) !== 118 /* v */ ||
    value.charCodeAt(comma + 2) !== 49 /* 1 */ ||
    value.charCodeAt(comma + 3) !== 61 /* = */
  ) {
    return undefined
  }
  const timestamp = wholeNumber(value, 2, comma)
  if (timestamp < 0) return undefined
  return { timestamp, timestampText: value.slice(2, comma), v1: value.slice(comma + 4) }
}

/** The canonical header with its `v1` in lowercase hex; anything else returns undefined. */
function canonical(value: string): SignatureHeader | undefined {
  const shape = canonicalHeader(value)
  if (shape === undefined || hexKind(shape.v1, 0, 64) !== Hex.Lower) return undefined
  return { timestamp: shape.timestamp, timestampText: shape.timestampText, signatures: [shape.v1] }
}

/** The `t` of one part, checked: digits only, at most 15 of them. */
function timestampOf(value: string, from: number, to: number): string {
  const digits = to - from
  if (digits === 0 || digits > 15 || !allDigits(value, from, to)) {
    throw malformed('t is not a whole number of seconds')
  }
  return value.slice(from, to)
}

/**
 * The general parser. A usable match wins: parts without `=`, unknown keys and
 * `v1` values that are not hex are skipped, every hex `v1` is kept (the length
 * cap bounds how many), and a `t` repeated with the same text (a proxy that
 * repeated the header, joined with ", ") is one `t`.
 */
function parseAnyOrder(value: string): SignatureHeader {
  const length = value.length
  if (length > MAX_SIGNATURE_HEADER_LENGTH) {
    throw malformed(`longer than ${MAX_SIGNATURE_HEADER_LENGTH} characters`)
  }
  let timestampText: string | undefined
  const signatures: string[] = []
  let v1Count = 0
  for (let start = 0; start <= length; ) {
    let end = value.indexOf(',', start)
    if (end === -1) end = length
    let from = start
    let to = end
    while (from < to && isSpace(value.charCodeAt(from))) from++
    while (to > from && isSpace(value.charCodeAt(to - 1))) to--
    start = end + 1
    const eq = value.indexOf('=', from)
    // Empty, or not key=value: nothing in it can be used, as with an unknown key.
    if (eq === -1 || eq >= to) continue
    let keyEnd = eq
    while (keyEnd > from && isSpace(value.charCodeAt(keyEnd - 1))) keyEnd--
    let valueStart = eq + 1
    while (valueStart < to && isSpace(value.charCodeAt(valueStart))) valueStart++
    const keyLength = keyEnd - from
    if (keyLength === 1 && value.charCodeAt(from) === 116 /* t */) {
      const text = timestampOf(value, valueStart, to)
      if (timestampText !== undefined && timestampText !== text) {
        throw malformed('t appears twice with different values')
      }
      timestampText = text
    } else if (
      keyLength === 2 &&
      value.charCodeAt(from) === 118 /* v */ &&
      value.charCodeAt(from + 1) === 49 /* 1 */
    ) {
      v1Count++
      const kind = valueStart === to ? Hex.Invalid : hexKind(value, valueStart, to)
      // A value that is not hex can match nothing: skipped, so that a usable one
      // beside it (`v1=potato,v1=<hex>`, as Stripe's own tests send) still counts.
      if (kind === Hex.Invalid) continue
      const signature = value.slice(valueStart, to)
      signatures.push(kind === Hex.Mixed ? signature.toLowerCase() : signature)
    }
  }
  if (timestampText === undefined) throw malformed('no t')
  if (signatures.length === 0) throw malformed(v1Count === 0 ? 'no v1' : 'no v1 value is hex')
  return { timestamp: Number(timestampText), timestampText, signatures }
}

/** Builds the header value the service sends. */
export function formatSignatureHeader(timestamp: number | string, signature: string): string {
  return `t=${timestamp},v1=${signature}`
}

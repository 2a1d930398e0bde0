/**
 * What a sender or a tool in between may have done to a secret or a body after
 * the service signed it: each variant undoes one such change, with the
 * {@link DiagnosisCode} that names it.
 */
import type { DiagnosisCode } from './diagnosis-types.js'

/** One way the secret or the body may have been changed, undone: the value to try and the codes naming the change. */
export interface Variant<T> {
  value: T
  causes: DiagnosisCode[]
}

const enc = new TextEncoder()
const BOM = [0xef, 0xbb, 0xbf]
/** The prefix every endpoint secret starts with; part of the HMAC key. */
export const PREFIX = 'whsec_'

const sameBytes = (a: Uint8Array, b: Uint8Array) =>
  a.byteLength === b.byteLength && a.every((byte, i) => byte === b[i])

/** The secret as given, cleaned of whitespace and quotes, and with the `whsec_` prefix added or taken off: the keys a sender may have used. */
export function secretVariants(secret: string): Variant<string>[] {
  const out: Variant<string>[] = []
  const add = (value: string, causes: DiagnosisCode[]) => {
    if (value !== '' && !out.some((v) => v.value === value)) out.push({ value, causes })
  }
  const cleaned = secret
    .trim()
    .replace(/^(['"])(.*)\1$/s, '$2')
    .trim()
  add(secret, [])
  add(cleaned, ['secret_whitespace'])
  for (const [base, causes] of [
    [secret, []],
    [cleaned, ['secret_whitespace']],
  ] as const) {
    if (base.startsWith(PREFIX))
      add(base.slice(PREFIX.length), [...causes, 'signed_without_prefix'])
    else add(PREFIX + base, [...causes, 'secret_without_prefix'])
  }
  return out
}

function decodeUtf8Strict(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes)
  } catch {
    return undefined
  }
}

/** Escapes non-ASCII as \uXXXX (Python's ensure_ascii, PHP's default), and `/` too when asked. */
function escapeJson(text: string, slashes: boolean): string {
  let out = text.replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  )
  if (slashes) out = out.replace(/\//g, '\\/')
  return out
}

/** Python's json.dumps default: `, ` and `: ` between items. */
function pythonStyle(value: unknown): string {
  return JSON.stringify(value, null, 1)
    .replace(/\n\s*/g, ' ')
    .replace(/\[ /g, '[')
    .replace(/ \]/g, ']')
    .replace(/\{ /g, '{')
    .replace(/ \}/g, '}')
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
  )
}

const ENVELOPE_ORDER = ['id', 'type', 'createdAt', 'data']
const CONVERSION_ORDER = [
  'id',
  'programId',
  'channelId',
  'status',
  'saleAmount',
  'commission',
  'currency',
  'occurredAt',
]

function ordered(value: Record<string, unknown>, order: readonly string[]) {
  const keys = [
    ...order.filter((k) => k in value),
    ...Object.keys(value).filter((k) => !order.includes(k)),
  ]
  return Object.fromEntries(keys.map((key) => [key, value[key]]))
}

/** Fields back in the spec's table order, for a body whose keys were sorted or shuffled. */
function specOrder(event: Record<string, unknown>): unknown {
  const out = ordered(event, ENVELOPE_ORDER)
  const data = out.data as Record<string, unknown> | undefined
  if (data && typeof data === 'object' && data.conversion && typeof data.conversion === 'object') {
    out.data = {
      ...data,
      conversion: ordered(data.conversion as Record<string, unknown>, CONVERSION_ORDER),
    }
  }
  return out
}

/** The body as captured, and as it was likely signed before a known change (newline, whitespace, CRLF, BOM, encoding, re-serialisation). */
export function bodyVariants(body: Uint8Array): Variant<Uint8Array>[] {
  const out: Variant<Uint8Array>[] = []
  const add = (value: Uint8Array, causes: DiagnosisCode[]) => {
    if (!out.some((v) => sameBytes(v.value, value))) out.push({ value, causes })
  }
  add(body, [])
  const hasBom = BOM.every((byte, i) => body[i] === byte)
  const boms: Variant<Uint8Array>[] = [{ value: body, causes: [] }]
  boms.push(
    hasBom
      ? { value: body.subarray(3), causes: ['body_bom'] }
      : { value: new Uint8Array([...BOM, ...body]), causes: ['body_bom_removed'] },
  )
  for (const bom of boms) {
    const text = decodeUtf8Strict(bom.value)
    if (text === undefined) continue
    const lineEndings: Variant<string>[] = [{ value: text, causes: bom.causes }]
    if (text.includes('\r\n')) {
      lineEndings.push({ value: text.replace(/\r\n/g, '\n'), causes: [...bom.causes, 'body_crlf'] })
    } else if (text.includes('\n')) {
      lineEndings.push({ value: text.replace(/\n/g, '\r\n'), causes: [...bom.causes, 'body_lf'] })
    }
    for (const ending of lineEndings) {
      const trimmedEnd = ending.value.replace(/[\r\n]+$/, '')
      add(enc.encode(ending.value), ending.causes)
      if (trimmedEnd !== ending.value) {
        add(enc.encode(trimmedEnd), [...ending.causes, 'body_trailing_newline'])
      } else {
        add(enc.encode(`${ending.value}\n`), [...ending.causes, 'body_missing_newline'])
      }
      // Not String#trim, which also strips a byte order mark: that has its own cause.
      const trimmed = ending.value.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, '')
      if (trimmed !== ending.value && trimmed !== trimmedEnd) {
        add(enc.encode(trimmed), [...ending.causes, 'body_whitespace'])
      }
    }
  }
  // Bytes that are not the UTF-8 that was signed: Latin-1 taken for UTF-8 or the other way round.
  const strict = decodeUtf8Strict(body)
  if (strict === undefined) {
    add(enc.encode(new TextDecoder('latin1').decode(body)), ['body_encoding'])
  } else if ([...strict].every((c) => c.charCodeAt(0) < 256) && /[\u0080-\u00ff]/.test(strict)) {
    add(
      Uint8Array.from(strict, (c) => c.charCodeAt(0)),
      ['body_encoding'],
    )
  }
  const text = decodeUtf8Strict(hasBom ? body.subarray(3) : body)
  let parsed: unknown
  try {
    parsed = text === undefined ? undefined : JSON.parse(text)
  } catch {
    parsed = undefined
  }
  if (parsed !== undefined && typeof parsed === 'object' && parsed !== null) {
    const layouts = [
      JSON.stringify(parsed),
      JSON.stringify(specOrder(parsed as Record<string, unknown>)),
      JSON.stringify(parsed, null, 2),
      JSON.stringify(parsed, null, 4),
      JSON.stringify(parsed, null, '\t'),
      pythonStyle(parsed),
      JSON.stringify(sortKeys(parsed)),
    ]
    for (const layout of [...layouts]) {
      layouts.push(escapeJson(layout, false), escapeJson(layout, true))
    }
    for (const layout of layouts) {
      add(enc.encode(layout), ['body_reserialized'])
      add(enc.encode(`${layout}\n`), ['body_reserialized'])
    }
  }
  return out
}

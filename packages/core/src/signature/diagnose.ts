import { isWebhookError, WebhookError } from '../errors.js'
import { signPayload } from '../testing/index.js'
import { parseSignatureHeader } from './signature-header.js'
import {
  DEFAULT_TOLERANCE_SECONDS,
  signatureAgeSeconds,
  verifyEvent,
  withinTolerance,
} from './verify.js'

/** Why a captured delivery does or does not verify. */
export type DiagnosisCode =
  | 'verified'
  | 'missing_header'
  | 'malformed_header'
  | 'secret_without_prefix'
  | 'signed_without_prefix'
  | 'secret_whitespace'
  | 'body_trailing_newline'
  | 'body_missing_newline'
  | 'body_whitespace'
  | 'body_crlf'
  | 'body_lf'
  | 'body_bom'
  | 'body_bom_removed'
  | 'body_encoding'
  | 'body_reserialized'
  | 'timestamp_outside_tolerance'
  | 'invalid_event'
  | 'event_id_mismatch'
  | 'wrong_secret'

/** A captured delivery to check, as {@link diagnoseSignature} takes it. */
export interface DiagnoseOptions {
  /** The `Service-Signature` value as captured. */
  header: string | undefined
  /** The body exactly as captured. */
  body: Uint8Array
  /** The endpoint secret to check with, `whsec_` prefix included. */
  secret: string
  /** Seconds, checked as verification checks them (see `VerifyOptions.tolerance`). Default 300, the spec's five minutes. */
  tolerance?: number
  /** Epoch ms to check the timestamp against. Default now. */
  now?: number
  /** The `Service-Event-Id` header, when captured. */
  eventId?: string
}

/** The answer of {@link diagnoseSignature}: verifies or not, and the likely reason. */
export interface Diagnosis {
  /** True when a receiver with this secret would accept the delivery now. */
  verified: boolean
  /** The main reason; `verified` when it verifies. */
  code: DiagnosisCode
  /** One sentence: what is wrong, or that it verifies. */
  message: string
  /** Every change that makes the signature match, when one does (`code` is the first). */
  causes: DiagnosisCode[]
  /** What to check or change next. */
  hints: string[]
  /** The signature's `t`, seconds. */
  signedAt?: number
  /** now - t in whole seconds, as the tolerance is checked: positive when the signature is older than now. */
  ageSeconds?: number
  /** The tolerance checked against, seconds. */
  tolerance: number
  event?: { id: string; type: string }
}

interface Variant<T> {
  value: T
  causes: DiagnosisCode[]
}

const enc = new TextEncoder()
const BOM = [0xef, 0xbb, 0xbf]
const PREFIX = 'whsec_'

const sameBytes = (a: Uint8Array, b: Uint8Array) =>
  a.byteLength === b.byteLength && a.every((byte, i) => byte === b[i])

function secretVariants(secret: string): Variant<string>[] {
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

function bodyVariants(body: Uint8Array): Variant<Uint8Array>[] {
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

const MESSAGES: Record<DiagnosisCode, string> = {
  verified: 'The signature matches this body and secret, within the tolerance.',
  missing_header: 'There is no Service-Signature value to check.',
  malformed_header: 'The Service-Signature value is not of the form t=<unix time>,v1=<hex>.',
  secret_without_prefix:
    'The secret is used without its whsec_ prefix: the HMAC key is the whole secret, prefix included.',
  signed_without_prefix:
    'The signature was made with the secret minus its whsec_ prefix; the service keys the HMAC with the whole secret, prefix included.',
  secret_whitespace:
    'The secret carries surrounding whitespace or quotes (a .env file or a copy-paste): the key is the bare whsec_... string.',
  body_trailing_newline:
    'The body ends with a newline that was not signed (added when it was saved, echoed or logged).',
  body_missing_newline: 'The body lost the final newline it was signed with.',
  body_whitespace: 'The body gained leading or trailing whitespace after it was signed.',
  body_crlf:
    'The body has CRLF line endings where LF was signed (a Windows tool or an HTTP client changed them).',
  body_lf: 'The body has LF line endings where CRLF was signed.',
  body_bom:
    'A UTF-8 byte order mark was put in front of the body after it was signed (a Windows editor does this).',
  body_bom_removed: 'The body lost the byte order mark it was signed with.',
  body_encoding:
    'The body was re-encoded: these bytes are not the UTF-8 that was signed (a Latin-1 / Windows-1252 conversion).',
  body_reserialized:
    'The body was re-serialised as JSON (parsed and stringified by a body parser, a proxy or API gateway that re-encodes bodies, a logger or a tool), so its bytes differ from what was signed.',
  timestamp_outside_tolerance: 'The signature matches, but its timestamp is outside the tolerance.',
  invalid_event: 'The signature matches, but the body is not a valid event.',
  event_id_mismatch:
    'The signature matches, but Service-Event-Id differs from the id in the signed body.',
  wrong_secret:
    'No signature matches: most likely the secret is not the one this endpoint signs with, or the body was changed in a way not recognised.',
}

const BODY_FIX =
  'Verify the raw request bytes, before any body parser: express.raw() / rawBodySaver, fastify-raw-body, request.arrayBuffer() in Next, or the adapters of this project which do this for you. If a proxy, load balancer or API gateway (a mapping template, a WAF, an edge function) sits in front of the app, make it pass the body through untouched; affiliate-webhooks listen --save shows what reaches you.'

function describeAge(age: number, tolerance: number): string {
  const when = age >= 0 ? `${age} s ago` : `${-age} s in the future`
  return withinTolerance(age, tolerance)
    ? `signed ${when}, within the ${tolerance} s tolerance`
    : `signed ${when}, ${Math.abs(age) - tolerance} s beyond the ${tolerance} s tolerance`
}

type Result = (code: DiagnosisCode, extra?: Partial<Diagnosis>, message?: string) => Diagnosis

const resultMaker =
  (tolerance: number): Result =>
  (code, extra = {}, message = MESSAGES[code]) => ({
    verified: code === 'verified',
    code,
    message,
    causes: code === 'verified' ? [] : [code],
    hints: [],
    tolerance,
    ...extra,
  })

/** The header's value as pasted (with its name, in quotes), or the diagnosis of why it is unusable. */
function readHeader(
  given: string | undefined,
  result: Result,
): { header: string; signedAt: number; hints: string[] } | Diagnosis {
  let header = given?.trim() ?? ''
  const hints: string[] = []
  // Pasted with its name, or in quotes: take the value and say so.
  const named = /^service-signature\s*:\s*/i.exec(header)
  if (named) {
    header = header.slice(named[0].length)
    hints.push(
      'The header was given with its name; only the value after "Service-Signature:" is used.',
    )
  }
  const quoted = /^(['"])(.*)\1$/s.exec(header)
  if (quoted) header = (quoted[2] as string).trim()
  if (header === '') {
    return result('missing_header', {
      hints: [
        'Pass the value of the Service-Signature request header, e.g. --header "t=1763719200,v1=5f2c..."',
      ],
    })
  }
  try {
    return { header, signedAt: parseSignatureHeader(header).timestamp, hints }
  } catch (error) {
    return result('malformed_header', {
      hints: [
        ...hints,
        isWebhookError(error) ? error.message : String(error),
        'Copy the whole value: t=<unix seconds>,v1=<64 hex digits>, nothing cut at a comma.',
      ],
    })
  }
}

/** What the core's own refusal says; undefined for a plain signature mismatch (look further). */
function explainRefusal(
  error: WebhookError,
  base: { signedAt: number; ageSeconds: number },
  hints: string[],
  tolerance: number,
  result: Result,
): Diagnosis | undefined {
  const { ageSeconds } = base
  switch (error.code) {
    case 'timestamp_outside_tolerance':
      return result(
        'timestamp_outside_tolerance',
        {
          ...base,
          hints: [
            ...hints,
            ageSeconds > 0
              ? 'A receiver refuses old signatures so a captured request cannot be replayed. If this is an old capture, that is expected: pass --now <t> to check it as of then. Otherwise the sender or this machine has a wrong clock (check NTP).'
              : "The signature is from the future: the sender's or this machine's clock is ahead (check NTP).",
          ],
        },
        `The signature matches, but it was ${describeAge(ageSeconds, tolerance)}.`,
      )
    case 'event_id_mismatch':
      return result('event_id_mismatch', { ...base, hints })
    case 'malformed_json':
    case 'invalid_payload':
      return result(
        'invalid_event',
        { ...base, hints: [...hints, error.message] },
        `${MESSAGES.invalid_event} ${error.code}: ${error.message}`,
      )
    case 'signature_mismatch':
      return undefined
    default:
      return result('wrong_secret', { ...base, hints: [...hints, error.message] }, error.message)
  }
}

/** Hints when no usual accident explains the mismatch. */
function wrongSecretHints(secretGiven: string, body: Uint8Array): string[] {
  const hints: string[] = []
  const secret = secretGiven.trim()
  if (secret.startsWith('la_')) {
    hints.push('That looks like an API key (la_...), not the endpoint secret (whsec_...).')
  } else if (!secret.startsWith(PREFIX)) {
    hints.push('Endpoint secrets start with whsec_; this one does not.')
  }
  hints.push(
    'Use the secret of the endpoint that received this delivery; after a rotation the old secret stops at once, also for deliveries already queued.',
    'If the secret is right, the body is not the bytes that were signed: capture the raw body before any parser.',
  )
  const text = new TextDecoder().decode(body)
  if (/^\s*[{[]/.test(text) && /\n[ \t]+"/.test(text)) {
    hints.push(
      'The body is pretty-printed JSON, which suggests it was re-formatted after it was signed.',
    )
  }
  return hints
}

/**
 * Checks a captured header and body with the core's own verification, and when
 * they do not verify, finds the likely reason by trying the usual accidents
 * (prefix dropped, newline added, CRLF, BOM, re-encoding, re-serialised JSON) to
 * see which one makes the signature match.
 */
export async function diagnoseSignature(options: DiagnoseOptions): Promise<Diagnosis> {
  const tolerance = options.tolerance ?? DEFAULT_TOLERANCE_SECONDS
  const nowMs = options.now ?? Date.now()
  const result = resultMaker(tolerance)
  const read = readHeader(options.header, result)
  if ('code' in read) return read
  const { header, signedAt, hints } = read
  const ageSeconds = signatureAgeSeconds(nowMs, signedAt)
  const base = { signedAt, ageSeconds }

  // A plain HMAC comparison: the variants tried (no prefix, white space) are
  // secrets a receiver would refuse to start with, which is the point.
  const { signatures } = parseSignatureHeader(header)
  const matches = async (secret: string, body: Uint8Array) => {
    const signed = await signPayload({ secret, payload: body, timestamp: signedAt })
    return signatures.includes(parseSignatureHeader(signed).signatures[0] as string)
  }

  const headers: Record<string, string> = { 'service-signature': header }
  if (options.eventId !== undefined) headers['service-event-id'] = options.eventId
  // A secret a receiver would refuse at start-up goes straight to the variants below.
  const usable = options.secret.startsWith(PREFIX) && options.secret.trim() === options.secret
  try {
    if (!usable) throw new WebhookError('signature_mismatch', 'unusable secret')
    const event = await verifyEvent({
      headers,
      rawBody: options.body,
      secret: options.secret,
      tolerance,
      now: () => nowMs,
    })
    return result('verified', {
      ...base,
      hints: [...hints, describeAge(ageSeconds, tolerance)],
      event: { id: event.id, type: event.type },
    })
  } catch (error) {
    if (!isWebhookError(error)) throw error
    const explained = explainRefusal(error, base, hints, tolerance, result)
    if (explained) return explained
  }

  // Which usual accident, undone, makes the signature match?
  const found: DiagnosisCode[][] = []
  const bodies = bodyVariants(options.body)
  for (const secret of secretVariants(options.secret)) {
    for (const body of bodies) {
      if (secret.causes.length + body.causes.length === 0) continue
      if (await matches(secret.value, body.value)) found.push([...secret.causes, ...body.causes])
    }
  }
  if (!withinTolerance(ageSeconds, tolerance)) {
    hints.push(`Also: ${describeAge(ageSeconds, tolerance)}.`)
  }
  if (found.length > 0) {
    // The explanation that needs the fewest changes is the likeliest.
    found.sort((a, b) => a.length - b.length)
    const causes = found[0] as DiagnosisCode[]
    const code = causes[0] as DiagnosisCode
    const bodyChanged = causes.some((c) => c.startsWith('body_'))
    return {
      ...result(code, base, causes.map((c) => MESSAGES[c]).join(' ')),
      causes,
      hints: bodyChanged ? [...hints, BODY_FIX] : hints,
    }
  }
  return result('wrong_secret', {
    ...base,
    hints: [...hints, ...wrongSecretHints(options.secret, options.body)],
  })
}

/**
 * A {@link Diagnosis} as a person reads it: verified and the event, or does not
 * verify and the code; then the message, the causes when several, and each hint.
 */
export function formatDiagnosis(diagnosis: Diagnosis): string {
  const lines = diagnosis.verified
    ? [`verified: ${diagnosis.event?.type} ${diagnosis.event?.id}`]
    : [`does not verify: ${diagnosis.code}`]
  lines.push(`  ${diagnosis.message}`)
  if (diagnosis.causes.length > 1) lines.push(`  causes: ${diagnosis.causes.join(', ')}`)
  for (const hint of diagnosis.hints) lines.push(`  - ${hint}`)
  return lines.join('\n')
}

import type { Diagnosis, DiagnosisCode } from './diagnosis-types.js'
import { withinTolerance } from './verify.js'

/** One sentence per {@link DiagnosisCode}: what is wrong, or that it verifies. */
export const MESSAGES: Record<DiagnosisCode, string> = {
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

/** The hint for every change made to the body: where to take the raw bytes from. */
export const BODY_FIX =
  'Verify the raw request bytes, before any body parser: express.raw() / rawBodySaver, fastify-raw-body, request.arrayBuffer() in Next, or the adapters of this project which do this for you. If a proxy, load balancer or API gateway (a mapping template, a WAF, an edge function) sits in front of the app, make it pass the body through untouched; affiliate-webhooks listen --save shows what reaches you.'

/** The signature's age in words, against the tolerance. */
export function describeAge(age: number, tolerance: number): string {
  const when = age >= 0 ? `${age} s ago` : `${-age} s in the future`
  return withinTolerance(age, tolerance)
    ? `signed ${when}, within the ${tolerance} s tolerance`
    : `signed ${when}, ${Math.abs(age) - tolerance} s beyond the ${tolerance} s tolerance`
}

/** Builds a {@link Diagnosis} for a code, with the code's message unless another is given. */
export type Result = (
  code: DiagnosisCode,
  extra?: Partial<Diagnosis>,
  message?: string,
) => Diagnosis

/** The {@link Result} builder for one tolerance. */
export const resultMaker =
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

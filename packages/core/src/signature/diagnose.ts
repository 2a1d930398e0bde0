import { isWebhookError, WebhookError } from '../errors.js'
import { BODY_FIX, describeAge, MESSAGES, type Result, resultMaker } from './diagnosis-messages.js'
import type { DiagnoseOptions, Diagnosis, DiagnosisCode } from './diagnosis-types.js'
import { bodyVariants, PREFIX, secretVariants } from './diagnosis-variants.js'
import { signPayload } from './sign.js'
import { parseSignatureHeader } from './signature-header.js'
import {
  DEFAULT_TOLERANCE_SECONDS,
  signatureAgeSeconds,
  verifyEvent,
  withinTolerance,
} from './verify.js'

export type { DiagnoseOptions, Diagnosis, DiagnosisCode }

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

import { WebhookError } from '../errors.js'
import type { AnyWebhookEvent } from '../events/event-types.js'
import { parseEvent } from '../events/parse-event.js'
import { getHeader, type HeadersInput } from '../http/headers.js'
import { platform } from '../platform/index.js'
import { isSecretSource, SecretKeeper, type SecretSource } from './secret-source.js'
import { canonicalHeader, parseSignatureHeader } from './signature-header.js'

/** Name of the signature header, lowercase. */
export const SIGNATURE_HEADER = 'service-signature'
/** Name of the (unsigned) event id header, lowercase. */
export const EVENT_ID_HEADER = 'service-event-id'
/** Name of the attempt number header (1 to 8), lowercase. */
export const ATTEMPT_HEADER = 'service-delivery-attempt'

/** Default signature tolerance, seconds: the spec's five minutes. */
export const DEFAULT_TOLERANCE_SECONDS = 300
/** Default body limit, bytes: the spec's 1 MB request limit. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024

/** One delivery as an adapter hands it over: headers and the exact bytes received. */
export interface DeliveryInput {
  headers: HeadersInput
  rawBody: Uint8Array
  /**
   * When the request started (`Date.now()`), for `answerWithinMs`: adapters
   * pass it, so the time the body took counts. Default: when `receive` is called.
   */
  startedAt?: number | undefined
}

/** How to verify: the secret(s) and limits. Part of every receiver's options. */
export interface VerifyOptions {
  /**
   * The endpoint's secret, `whsec_` prefix included; several while rotating; or
   * a {@link SecretSource} the receiver asks again when no secret matches, so a
   * rotation needs no restart. Typed to take `process.env.X` as it is: a missing
   * secret throws at start-up.
   */
  secret: string | readonly string[] | SecretSource | undefined
  /**
   * Largest accepted |now - t|, in whole seconds (now rounded down to its
   * second): a `t` exactly 300 s old or ahead is accepted, 301 s refused.
   * Default 300 (the spec's five minutes).
   */
  tolerance?: number | undefined
  /** Largest accepted body, in bytes. Default 1 MiB. */
  maxBodyBytes?: number | undefined
  /** Clock in milliseconds, for tests. Default `Date.now`. */
  now?: (() => number) | undefined
}

export interface VerifiedDelivery {
  event: AnyWebhookEvent
  /** The signature's `t`, seconds since the epoch. */
  signedAt: number
  /** `Service-Delivery-Attempt` (1 to 8), or null when absent or not a number. */
  attempt: number | null
  /** Where the event stands in its conversion's order (see ParsedEvent.order). */
  order: number
  conversionId: number | undefined
}

/** Options checked once, so the per-request path does no validation of its own. */
export interface VerifySettings {
  /** The fixed secrets; empty when they come from `source`. */
  secrets: readonly string[]
  source: SecretKeeper | undefined
  tolerance: number
  maxBodyBytes: number
  now: () => number
}

export function resolveVerifySettings(options: VerifyOptions, caller: string): VerifySettings {
  const { secret } = options
  const tolerance = options.tolerance ?? DEFAULT_TOLERANCE_SECONDS
  if (!(tolerance >= 0)) throw new TypeError(`${caller}: \`tolerance\` must be seconds >= 0`)
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  if (!(maxBodyBytes > 0)) throw new TypeError(`${caller}: \`maxBodyBytes\` must be > 0`)
  const now = options.now ?? Date.now
  if (isSecretSource(secret)) {
    const source = new SecretKeeper(secret, (secrets) => checkSecrets(secrets, secret, caller))
    return { secrets: [], source, tolerance, maxBodyBytes, now }
  }
  const secrets: unknown[] =
    typeof secret === 'string' ? [secret] : Array.isArray(secret) ? secret : [secret]
  return {
    secrets: checkSecrets(secrets, secret, caller),
    source: undefined,
    tolerance,
    maxBodyBytes,
    now,
  }
}

const PREFIX = 'whsec_'
const WHERE =
  'It is shown once, when the endpoint is registered (POST /v1/webhooks) or its secret rotated (POST /v1/webhooks/{id}/rotate-secret); `npx @affiliate-webhooks/cli endpoints create --redis` and `rotate` keep it for you.'

/**
 * The secrets, checked: a mistake here would fail every delivery with 401 and
 * nothing saying why, so it throws at start-up instead. Never repeats the secret.
 * A copy, so a caller changing its array later skips no check.
 */
function checkSecrets(
  secrets: readonly unknown[],
  given: unknown,
  caller: string,
): readonly string[] {
  if (secrets.length === 0 || !secrets.every((s) => typeof s === 'string' && s.length > 0)) {
    throw new TypeError(
      `${caller}: \`secret\` must be a non-empty string or array of strings (the endpoint's whsec_... secret); got ${describe(given)}. Is AFFILIATE_WEBHOOK_SECRET set?`,
    )
  }
  secrets.forEach((secret, index) => {
    const which = secrets.length > 1 ? `secret[${index}]` : 'the secret'
    const text = secret as string
    if (text.trim() !== text) {
      throw new TypeError(
        `${caller}: ${which} has white space around it (a newline from a .env file or a copy-paste?); the key is the bare whsec_... string.`,
      )
    }
    if (!text.startsWith(PREFIX) || text.length === PREFIX.length) {
      throw new TypeError(
        `${caller}: ${which} must start with "${PREFIX}": use the whole signing secret, prefix included (the prefix is part of the HMAC key). ${WHERE}`,
      )
    }
  })
  return Object.freeze([...(secrets as string[])])
}

function describe(value: unknown): string {
  if (value === undefined) return 'undefined'
  if (Array.isArray(value)) return `an array of ${value.length}`
  return typeof value === 'string' ? 'an empty string' : typeof value
}

/** Starts with `t=`, as every header the service sends does: so not blank. */
const isCanonicalStart = (header: string) =>
  header.charCodeAt(0) === 116 /* t */ && header.charCodeAt(1) === 61 /* = */

/** A Uint8Array or Buffer from any realm (instanceof fails across vm contexts). */
const isBytes = (value: unknown): value is Uint8Array =>
  ArrayBuffer.isView(value) && (value as Uint8Array).BYTES_PER_ELEMENT === 1

const ATTEMPT = /^[1-9]\d{0,5}$/

function parseAttempt(value: string | undefined): number | null {
  if (value === undefined) return null
  // The service sends 1 to 8: one digit, read without the regex.
  if (value.length === 1) {
    const digit = value.charCodeAt(0) - 48
    return digit >= 1 && digit <= 9 ? digit : null
  }
  return ATTEMPT.test(value) ? Number(value) : null
}

/** The signature header's `t` and its `v1` values as bytes (those that can match). */
interface SignatureInput {
  timestamp: number
  timestampText: string
  signatures: Uint8Array[]
}

/**
 * Reads the signature header: the service's own shape at once, its hex checked
 * by the platform's decoding; anything else through the general parser, which
 * throws `malformed_signature` when no `t` or no hex `v1` is usable.
 */
function readSignature(header: string): SignatureInput {
  const shape = canonicalHeader(header)
  if (shape !== undefined) {
    const bytes = platform.signatureBytes(shape.v1)
    if (bytes !== undefined) {
      return { timestamp: shape.timestamp, timestampText: shape.timestampText, signatures: [bytes] }
    }
  }
  const { timestamp, timestampText, signatures: hex } = parseSignatureHeader(header)
  const signatures: Uint8Array[] = []
  for (const value of hex) {
    // A value of the wrong length cannot match; skipping it leaks only its length.
    const bytes = platform.signatureBytes(value)
    if (bytes !== undefined) signatures.push(bytes)
  }
  return { timestamp, timestampText, signatures }
}

/**
 * now - t, in whole seconds: the clock's current second against `t`, which is
 * whole seconds too. Positive when the signature is older than now. The one
 * reading of the spec's "more than five minutes from the receiver's clock".
 */
export function signatureAgeSeconds(nowMs: number, signedAt: number): number {
  return Math.floor(nowMs / 1000) - signedAt
}

/** Whether a signature {@link signatureAgeSeconds} old is accepted: |age| <= tolerance. */
export function withinTolerance(ageSeconds: number, tolerance: number): boolean {
  return Math.abs(ageSeconds) <= tolerance
}

function checkTimestamp(signedAt: number, settings: VerifySettings): void {
  const age = signatureAgeSeconds(settings.now(), signedAt)
  if (!withinTolerance(age, settings.tolerance)) {
    const when = age > 0 ? `${age} s in the past` : `${-age} s in the future`
    throw new WebhookError(
      'timestamp_outside_tolerance',
      `The signature was made ${when}; tolerance is ${settings.tolerance} s. Check this server's clock.`,
    )
  }
}

/**
 * The service signs an event after it creates it, so a conversion event whose
 * createdAt is later than its signature's `t` plus the tolerance cannot be
 * honest; as a watermark it would make every later event of its conversion
 * `stale`. Refused before any store sees it.
 */
function checkNotFromFuture(order: number, signedAt: number, tolerance: number): void {
  // order is createdAt in microseconds, times two (plus one for an update).
  const createdAtMicros = Math.floor(order / 2)
  const latestMicros = (signedAt + tolerance) * 1_000_000
  if (createdAtMicros > latestMicros) {
    const ahead = Math.ceil((createdAtMicros - signedAt * 1_000_000) / 1_000_000)
    throw new WebhookError(
      'invalid_payload',
      `The event does not match the spec: createdAt is ${ahead} s after its signature's t (tolerance ${tolerance} s); the service signs events after it creates them.`,
    )
  }
}

function finish(
  matched: boolean,
  input: DeliveryInput,
  settings: VerifySettings,
  signedAt: number,
): VerifiedDelivery {
  if (!matched) {
    throw new WebhookError(
      'signature_mismatch',
      'No v1 signature matches this body and secret. Was the body changed before verification, or is the secret wrong?',
    )
  }
  checkTimestamp(signedAt, settings)
  const { event, order, conversionId } = parseEvent(platform.utf8Decode(input.rawBody))
  if (conversionId !== undefined) checkNotFromFuture(order, signedAt, settings.tolerance)
  const headerId = getHeader(input.headers, EVENT_ID_HEADER)
  // The body is signed and the header is not, so the body's id is the one we trust.
  if (headerId !== undefined && headerId !== event.id && headerId.trim() !== event.id) {
    throw new WebhookError(
      'event_id_mismatch',
      'Service-Event-Id differs from the id in the signed body.',
    )
  }
  const attempt = parseAttempt(getHeader(input.headers, ATTEMPT_HEADER))
  return { event, signedAt, attempt, order, conversionId }
}

/**
 * Steps 1 to 6 of the pipeline: size, signature header, HMAC, timestamp, JSON and
 * envelope, event id. Throws a {@link WebhookError} for what it can tell at once;
 * returns the delivery itself when every step was synchronous (fixed secrets on
 * node:crypto), else a promise that resolves to it or rejects with one.
 */
export function verifyDelivery(
  input: DeliveryInput,
  settings: VerifySettings,
): VerifiedDelivery | Promise<VerifiedDelivery> {
  if (!isBytes(input.rawBody)) {
    throw new WebhookError(
      'raw_body_unavailable',
      'rawBody must be the exact bytes received (a Uint8Array or Buffer); a parsed or re-serialised body cannot be verified.',
    )
  }
  if (input.rawBody.byteLength > settings.maxBodyBytes) {
    throw new WebhookError(
      'payload_too_large',
      `The body is larger than ${settings.maxBodyBytes} bytes.`,
    )
  }
  const header = getHeader(input.headers, SIGNATURE_HEADER)
  // Blank counts as missing; a header as the service sends it is never blank, so
  // the trim waits for one that is not.
  if (header === undefined || (!isCanonicalStart(header) && header.trim() === '')) {
    throw new WebhookError('missing_signature', 'The Service-Signature header is missing.')
  }
  const { timestamp, timestampText, signatures } = readSignature(header)
  const prefix = `${timestampText}.`
  const { source } = settings
  if (source === undefined) {
    const matched = platform.verify(settings.secrets, prefix, input.rawBody, signatures)
    // node:crypto answers synchronously; only Web Crypto pays for a promise (and closures) here.
    return !(matched instanceof Promise)
      ? finish(matched, input, settings, timestamp)
      : matched.then((result) => finish(result, input, settings, timestamp))
  }
  return verifyFromSource(
    source,
    settings.now(),
    (secrets) => platform.verify(secrets, prefix, input.rawBody, signatures),
    (matched) => finish(matched, input, settings, timestamp),
  )
}

/**
 * Verification against a secret source: the secrets it last gave, and when none
 * matches, the secrets it gives when asked again (rate-limited), so a delivery
 * signed with a secret rotated a moment ago is accepted without a restart.
 */
async function verifyFromSource(
  source: SecretKeeper,
  now: number,
  check: (secrets: readonly string[]) => boolean | Promise<boolean>,
  done: (matched: boolean) => VerifiedDelivery,
): Promise<VerifiedDelivery> {
  const known = await source.load()
  if (await check(known)) {
    source.freshen(now)
    return done(true)
  }
  const asking = source.refresh(now)
  if (asking === undefined) return done(false)
  const fresh = await asking
  return done(fresh !== known && (await check(fresh)))
}

// verifyEvent is called once per request with the same options: checking them
// again each time is measurable, so the last answer is kept.
let last:
  | {
      secret: unknown
      tolerance: unknown
      maxBodyBytes: unknown
      now: unknown
      settings: VerifySettings
    }
  | undefined
function settingsFor(options: VerifyOptions): VerifySettings {
  const { secret, tolerance, maxBodyBytes, now } = options
  if (
    last !== undefined &&
    last.secret === secret &&
    last.tolerance === tolerance &&
    last.maxBodyBytes === maxBodyBytes &&
    last.now === now
  ) {
    return last.settings
  }
  const settings = resolveVerifySettings(options, 'verifyEvent')
  last = { secret, tolerance, maxBodyBytes, now, settings }
  return settings
}

/**
 * Verifies one delivery and returns its typed event, without de-duplication or
 * dispatch. Rejects with a {@link WebhookError} whose `code` says why.
 *
 * @example
 * const event = await verifyEvent({ rawBody, headers, secret: process.env.AFFILIATE_WEBHOOK_SECRET })
 */
export function verifyEvent(options: VerifyOptions & DeliveryInput): Promise<AnyWebhookEvent> {
  // Not `async`: on node:crypto every step is synchronous, so the only promise
  // is the one handed back.
  try {
    const delivery = verifyDelivery(options, settingsFor(options))
    // verifyDelivery's promises are its own, native ones: no thenable test needed.
    return delivery instanceof Promise
      ? delivery.then((d) => d.event)
      : Promise.resolve(delivery.event)
  } catch (error) {
    return Promise.reject(error)
  }
}

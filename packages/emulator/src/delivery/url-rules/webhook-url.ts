import { isIP } from 'node:net'
import { characterCount } from '../../shared/characters.js'
import { isLoopbackAddress, refusedRange } from './ip-ranges.js'

/** Longest webhook URL the service takes. */
export const MAX_URL_LENGTH = 800

/** Why a URL is refused: a 400 validation (`invalid_format`) or a 422 `url_not_allowed`. */
export type UrlVerdict =
  | { ok: true; url: string }
  | { ok: false; kind: 'invalid_format' | 'url_not_allowed'; reason: string }

const LOOPBACK_NAMES = /^(localhost|.+\.localhost)$/i
const INTERNAL_NAMES = /(^|\.)(local|internal|localdomain|home\.arpa)$/i

/**
 * The host without IPv6 brackets and without the trailing dot of a fully
 * qualified name: `localhost.` and `intranet.` are the same hosts as without it.
 */
const bareHost = (hostname: string) => hostname.replace(/^\[|\]$/g, '').replace(/\.+$/, '')

/**
 * True for localhost, *.localhost, 127.0.0.0/8 and ::1, and an IPv6 address that
 * carries a 127.0.0.0/8 address (`[::ffff:127.0.0.1]`, `[64:ff9b::7f00:1]`, ...).
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = bareHost(hostname)
  return LOOPBACK_NAMES.test(host) || isLoopbackAddress(host)
}

/**
 * Why a host may not receive webhooks: a literal address in a refused range
 * (private, loopback, link-local, documentation, reserved...: see `ip-ranges.ts`;
 * an IPv6 address carrying an IPv4 one is judged by that), or a name that is
 * internal by definition. Undefined when allowed. Other names are not resolved:
 * the emulator does no DNS.
 */
export function privateHostReason(hostname: string): string | undefined {
  const host = bareHost(hostname)
  if (isIP(host) !== 0) return refusedRange(host)
  if (LOOPBACK_NAMES.test(host)) return 'a loopback name'
  if (INTERNAL_NAMES.test(host)) return 'an internal name'
  // A single label (intranet name) is internal too.
  return host.includes('.') ? undefined : 'a single-label (intranet) name'
}

/** True when {@link privateHostReason} names a reason. */
export const isPrivateHost = (hostname: string): boolean =>
  privateHostReason(hostname) !== undefined

/**
 * The service's rules for a webhook URL: https, port 443, at most 800
 * characters as stored (after normalisation: a character outside ASCII counts
 * as its percent-encoding), no credentials, a public host. With `allowLoopback`
 * (the emulator's default) an http or https URL on a loopback host, any port,
 * is allowed too, so a receiver on this machine can be registered.
 */
export function checkWebhookUrl(value: string, allowLoopback: boolean): UrlVerdict {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return { ok: false, kind: 'invalid_format', reason: 'not an absolute URL' }
  }
  const stored = characterCount(url.href)
  if (stored > MAX_URL_LENGTH) {
    const written = characterCount(value)
    const as = stored === written ? '' : ` (${stored} as stored, from ${written} as written)`
    return {
      ok: false,
      kind: 'invalid_format',
      reason: `longer than ${MAX_URL_LENGTH} characters${as}`,
    }
  }
  const loopback = allowLoopback && isLoopbackHost(url.hostname)
  if (url.protocol !== 'https:' && !(loopback && url.protocol === 'http:')) {
    return {
      ok: false,
      kind: 'invalid_format',
      reason: loopback ? 'must be http or https' : 'must be https',
    }
  }
  if (url.username !== '' || url.password !== '') {
    return { ok: false, kind: 'url_not_allowed', reason: 'credentials in the URL are not allowed' }
  }
  if (loopback) return { ok: true, url: url.href }
  if (url.port !== '' && url.port !== '443') {
    return { ok: false, kind: 'url_not_allowed', reason: 'only port 443 is allowed' }
  }
  const why = privateHostReason(url.hostname)
  if (why !== undefined) {
    return {
      ok: false,
      kind: 'url_not_allowed',
      reason: `the host is a private or internal address (${why})`,
    }
  }
  return { ok: true, url: url.href }
}

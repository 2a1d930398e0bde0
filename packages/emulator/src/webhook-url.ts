import { isIP } from 'node:net'

/** Longest webhook URL the service takes. */
export const MAX_URL_LENGTH = 800

/** Why a URL is refused: a 400 validation (`invalid_format`) or a 422 `url_not_allowed`. */
export type UrlVerdict =
  | { ok: true; url: string }
  | { ok: false; kind: 'invalid_format' | 'url_not_allowed'; reason: string }

const LOOPBACK_NAMES = /^(localhost|.+\.localhost)$/i
const INTERNAL_NAMES = /(^|\.)(local|internal|localdomain|home\.arpa)$/i

function ipv4Private(ip: string): boolean {
  const [a = 0, b = 0] = ip.split('.').map(Number)
  return (
    a === 0 ||
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 198 && (b === 18 || b === 19)) ||
    a >= 224
  )
}

function ipv6Private(ip: string): boolean {
  const lower = ip.toLowerCase()
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower)
  if (mapped) return ipv4Private(mapped[1] as string)
  // WHATWG URL writes an IPv4-mapped address in hex: [::ffff:c0a8:1] for 192.168.0.1.
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower)
  if (hex) {
    const high = Number.parseInt(hex[1] as string, 16)
    const low = Number.parseInt(hex[2] as string, 16)
    return ipv4Private(`${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`)
  }
  return (
    lower === '::' ||
    lower === '::1' ||
    /^f[cd]/.test(lower) ||
    /^fe[89ab]/.test(lower) ||
    /^ff/.test(lower)
  )
}

/**
 * The host without IPv6 brackets and without the trailing dot of a fully
 * qualified name: `localhost.` and `intranet.` are the same hosts as without it.
 */
const bareHost = (hostname: string) => hostname.replace(/^\[|\]$/g, '').replace(/\.+$/, '')

/** True for localhost, *.localhost, 127.0.0.0/8 and ::1. */
export function isLoopbackHost(hostname: string): boolean {
  const host = bareHost(hostname)
  if (LOOPBACK_NAMES.test(host)) return true
  if (isIP(host) === 4) return host.startsWith('127.')
  return isIP(host) === 6 && (host === '::1' || /^::ffff:(127\.|7f[0-9a-f]{2}:)/i.test(host))
}

/**
 * A literal private, loopback, link-local or reserved address, or a name that is
 * internal by definition. Other names are not resolved: the emulator does no DNS.
 */
export function isPrivateHost(hostname: string): boolean {
  const host = bareHost(hostname)
  if (isIP(host) === 4) return ipv4Private(host)
  if (isIP(host) === 6) return ipv6Private(host)
  // A single label (intranet name) is internal too.
  return LOOPBACK_NAMES.test(host) || INTERNAL_NAMES.test(host) || !host.includes('.')
}

/**
 * The service's rules for a webhook URL: https, port 443, at most 800
 * characters, no credentials, a public host. With `allowLoopback` (the
 * emulator's default) an http or https URL on a loopback host, any port, is
 * allowed too, so a receiver on this machine can be registered.
 */
export function checkWebhookUrl(value: string, allowLoopback: boolean): UrlVerdict {
  if (value.length > MAX_URL_LENGTH) {
    return { ok: false, kind: 'invalid_format', reason: `longer than ${MAX_URL_LENGTH} characters` }
  }
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return { ok: false, kind: 'invalid_format', reason: 'not an absolute URL' }
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
  if (isPrivateHost(url.hostname)) {
    return {
      ok: false,
      kind: 'url_not_allowed',
      reason: 'the host is a private or internal address',
    }
  }
  return { ok: true, url: url.href }
}

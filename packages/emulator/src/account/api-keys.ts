import { ApiError } from '../shared/api-error.js'

/** Every scope the spec lists. Write implies read. */
export const SCOPES = [
  'programs:read',
  'programs:write',
  'links:read',
  'links:write',
  'channels:read',
  'channels:write',
  'reports:read',
  'payments:read',
  'webhooks:read',
  'webhooks:write',
  'account:read',
] as const

/** One scope of {@link SCOPES}. */
export type Scope = (typeof SCOPES)[number]

/** An API key the emulator accepts, and what it may do. */
export interface ApiKey {
  /** `la_` and 32 letters or digits. */
  key: string
  scopes: readonly Scope[]
  /** The key's id in the control routes (`key_...`), shown by `GET /v1/me`; set by the emulator. */
  id?: string
  /** A label `GET /v1/me` shows. Default `emulator`. */
  name?: string
  /** Addresses and CIDR ranges the key may be used from; empty or absent: anywhere. */
  ipAllowlist?: readonly string[]
  /** Service time the key lapses, epoch ms; null or absent: never. */
  expiresAt?: number | null
}

/** The shape of a key: `la_` followed by 32 characters. */
export const API_KEY_PATTERN = /^la_[A-Za-z0-9]{32}$/

const isScope = (value: string): value is Scope => (SCOPES as readonly string[]).includes(value)

/**
 * `KEY` (every scope) or `KEY:scope,scope`, as `--api-key` takes it. Throws a
 * TypeError with a one-line reason when it is not.
 */
export function parseApiKey(spec: string): ApiKey {
  const colon = spec.indexOf(':')
  const key = colon === -1 ? spec : spec.slice(0, colon)
  if (!API_KEY_PATTERN.test(key)) {
    // Never the value itself: a secret given here by mistake must not be printed back.
    const what = key.startsWith('whsec_') ? ' (this one is an endpoint secret, whsec_...)' : ''
    throw new TypeError(`API key must be la_ followed by 32 letters or digits${what}`)
  }
  if (colon === -1) return { key, scopes: SCOPES }
  const scopes = spec
    .slice(colon + 1)
    .split(',')
    .map((scope) => scope.trim())
  const unknown = scopes.find((scope) => !isScope(scope))
  if (unknown !== undefined) {
    throw new TypeError(
      `unknown scope "${unknown}" for key ...${key.slice(-4)}; scopes: ${SCOPES.join(', ')}`,
    )
  }
  return { key, scopes: [...new Set(scopes)] as Scope[] }
}

/** True when the granted scopes include `required`, or its write form when it reads. */
export function grants(granted: readonly Scope[], required: Scope): boolean {
  if (granted.includes(required)) return true
  return (
    required.endsWith(':read') &&
    (granted as readonly string[]).includes(required.replace(/:read$/, ':write'))
  )
}

/** The key an `Authorization: Bearer` header presents, or 401 `invalid_api_key` for a missing or malformed one. */
export function presentedKey(header: string | undefined): string {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')
  if (!match) {
    throw new ApiError(
      'invalid_api_key',
      header === undefined
        ? 'Missing API key: send Authorization: Bearer la_...'
        : 'Malformed Authorization header: expected Bearer la_...',
    )
  }
  const presented = match[1] as string
  if (!API_KEY_PATTERN.test(presented)) {
    throw new ApiError(
      'invalid_api_key',
      'Malformed API key: expected la_ followed by 32 characters.',
    )
  }
  return presented
}

/** The key of an `Authorization: Bearer` header, or 401 `invalid_api_key`. */
export function authenticate(
  header: string | undefined,
  keys: ReadonlyMap<string, ApiKey>,
): ApiKey {
  const key = keys.get(presentedKey(header))
  if (!key) throw new ApiError('invalid_api_key', 'Unknown API key.')
  return key
}

/** 403 `insufficient_scope` (with `required` and `granted`) unless the key grants `required`. */
export function requireScope(key: ApiKey, required: Scope): void {
  if (grants(key.scopes, required)) return
  throw new ApiError('insufficient_scope', `This API key lacks the ${required} scope.`, {
    extra: { required, granted: [...key.scopes] },
  })
}

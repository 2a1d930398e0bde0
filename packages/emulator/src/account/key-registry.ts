import { randomBytes } from 'node:crypto'
import { ApiError } from '../shared/api-error.js'
import { newId } from '../shared/ids.js'
import type { ApiKey, Scope } from './api-keys.js'
import { createAllowlist } from './ip-allowlist.js'

/** Most keys of an account that are not revoked or expired. */
export const MAX_ACTIVE_KEYS = 10
/** The expiry choices, in days. */
export const KEY_EXPIRY_DAYS = [30, 90, 365] as const

const DAY = 86_400_000

/** `active`, `paused` (401 until resumed) or `revoked` (for good). Expiry is a time, not a state. */
export type KeyStatus = 'active' | 'paused' | 'revoked'

/** A key of the account with its lifecycle. `key` is the current secret. */
export interface KeyRecord extends ApiKey {
  id: string
  name: string
  ipAllowlist: readonly string[]
  expiresAt: number | null
  status: KeyStatus
  allows(ip: string): boolean
}

/** The registry as the state file keeps it: keys without their matcher, rolled secrets, the account. */
export interface KeyRegistrySnapshot {
  keys: Omit<KeyRecord, 'allows'>[]
  rolled: [secret: string, rotatedAt: number][]
  account: 'active' | 'inactive'
}

/** What `POST /emulator/keys` takes. */
export interface NewKeyInput {
  scopes: readonly Scope[]
  ipAllowlist?: readonly string[]
  expiresInDays?: (typeof KEY_EXPIRY_DAYS)[number]
  name?: string
}

const iso = (ms: number) => new Date(ms).toISOString()

/** A key with its lifecycle fields filled in: a given or restored key, or a new one. */
function keyRecord(
  key: ApiKey & { id?: string; status?: KeyStatus },
  input: Partial<NewKeyInput>,
  now: number,
): KeyRecord {
  const ipAllowlist = [...(input.ipAllowlist ?? key.ipAllowlist ?? [])]
  return {
    ...key,
    id: key.id ?? `key_${randomBytes(6).toString('hex')}`,
    name: input.name ?? key.name ?? 'emulator',
    ipAllowlist,
    expiresAt:
      input.expiresInDays === undefined ? (key.expiresAt ?? null) : now + input.expiresInDays * DAY,
    status: key.status ?? 'active',
    allows: ipAllowlist.length === 0 ? () => true : createAllowlist(ipAllowlist),
  }
}
const invalid = (message: string, extra?: Record<string, unknown>) =>
  new ApiError('invalid_api_key', message, extra ? { extra } : {})

/**
 * The keys by id and by secret, and the secrets rolled away: restored from a
 * saved snapshot (a restart keeps every key's state), plus each key given at the
 * start that the snapshot does not know and that was not rolled away.
 */
function keyIndex(initial: readonly ApiKey[], now: () => number, saved?: KeyRegistrySnapshot) {
  const records = new Map<string, KeyRecord>()
  const bySecret = new Map<string, KeyRecord>()
  /** Secrets replaced by a roll, and when. */
  const rolled = new Map<string, number>(saved?.rolled ?? [])
  const record = (
    key: ApiKey & { id?: string; status?: KeyStatus },
    input: Partial<NewKeyInput> = {},
  ): KeyRecord => {
    const entry = keyRecord(key, input, now())
    records.set(entry.id, entry)
    bySecret.set(entry.key, entry)
    return entry
  }
  for (const key of saved?.keys ?? []) record(key)
  for (const key of initial) if (!bySecret.has(key.key) && !rolled.has(key.key)) record(key)
  return { records, bySecret, rolled, record }
}

/**
 * The account's keys: several at once, sharing one rate limit and quota (the
 * limiter is per account), each with scopes, an optional IP allowlist and
 * expiry, and pause, resume, roll and revoke. `now` is the emulator's clock, so
 * an expiry lapses when the clock is advanced past it.
 */
export function createKeyRegistry(
  initial: readonly ApiKey[],
  now: () => number,
  saved?: KeyRegistrySnapshot,
) {
  const { records, bySecret, rolled, record } = keyIndex(initial, now, saved)
  let account: 'active' | 'inactive' = saved?.account ?? 'active'

  const expired = (key: KeyRecord) => key.expiresAt !== null && now() >= key.expiresAt
  const find = (id: string) => {
    const key = records.get(id)
    if (!key) throw new ApiError('key_not_found', `No API key ${id}.`)
    return key
  }
  const live = (id: string) => {
    const key = find(id)
    if (key.status === 'revoked') throw new ApiError('key_revoked', `API key ${id} is revoked.`)
    return key
  }

  return {
    /** Whether the account is active; an inactive one gets 401 on every key. */
    get account() {
      return account
    },
    setAccount(status: 'active' | 'inactive') {
      account = status
    },
    snapshot: (): KeyRegistrySnapshot => ({
      keys: [...records.values()].map(({ allows: _allows, ...key }) => key),
      rolled: [...rolled],
      account,
    }),
    /** Every key, revoked and expired ones included. */
    list: (): KeyRecord[] => [...records.values()],
    /** Keys that count toward the limit of 10: not revoked, not expired. */
    activeCount: () =>
      [...records.values()].filter((k) => k.status !== 'revoked' && !expired(k)).length,
    /** A new key; 409 `key_limit_reached` when 10 are active. */
    create(input: NewKeyInput): KeyRecord {
      if (this.activeCount() >= MAX_ACTIVE_KEYS) {
        throw new ApiError(
          'key_limit_reached',
          `An account has at most ${MAX_ACTIVE_KEYS} active keys; revoke one first.`,
        )
      }
      return record({ key: newId.apiKey(), scopes: input.scopes }, input)
    },
    pause: (id: string) => Object.assign(live(id), { status: 'paused' as const }),
    resume: (id: string) => Object.assign(live(id), { status: 'active' as const }),
    revoke: (id: string) => Object.assign(find(id), { status: 'revoked' as const }),
    /** A new secret; the old one gets 401 with `rotatedAt` from now on. */
    roll(id: string): KeyRecord {
      const key = live(id)
      rolled.set(key.key, now())
      bySecret.delete(key.key)
      key.key = newId.apiKey()
      bySecret.set(key.key, key)
      return key
    },
    /**
     * The key of a presented secret, or 401 `invalid_api_key` (unknown, paused,
     * expired, revoked, rolled with `rotatedAt`, account inactive unless
     * `control`) or 403 `ip_not_allowed` with `ip` whatever the scope.
     */
    check(presented: string, ip: string, control: boolean): KeyRecord {
      const key = bySecret.get(presented)
      const refusal = key
        ? refusalOf(key, {
            expired: expired(key),
            accountActive: account === 'active' || control,
            ip,
          })
        : refusalOfUnknown(rolled.get(presented))
      if (refusal) throw refusal
      return key as KeyRecord
    },
  }
}

/** 401 for a secret no key has now: unknown, or rolled away (with `rotatedAt`). */
function refusalOfUnknown(rotatedAt: number | undefined): ApiError {
  if (rotatedAt === undefined) return invalid('Unknown API key.')
  return invalid(`This API key was rolled on ${iso(rotatedAt)}; use the new secret.`, {
    rotatedAt: iso(rotatedAt),
  })
}

/**
 * Why a known key may not make this request, or undefined: 401 when revoked,
 * paused, expired or the account is inactive (the control routes stay open so a
 * test can turn it back on), then 403 `ip_not_allowed` with `ip`, whatever the scope.
 */
function refusalOf(
  key: KeyRecord,
  context: { expired: boolean; accountActive: boolean; ip: string },
): ApiError | undefined {
  if (key.status === 'revoked') return invalid('This API key was revoked.')
  if (key.status === 'paused') return invalid('This API key is paused; resume it to use it.')
  if (context.expired) return invalid(`This API key expired on ${iso(key.expiresAt as number)}.`)
  if (!context.accountActive) return invalid('The publisher account of this key is not active.')
  if (key.allows(context.ip)) return undefined
  return new ApiError(
    'ip_not_allowed',
    `Requests from ${context.ip} are outside this key's IP allowlist.`,
    { extra: { ip: context.ip } },
  )
}

/** What {@link createKeyRegistry} returns. */
export type KeyRegistry = ReturnType<typeof createKeyRegistry>

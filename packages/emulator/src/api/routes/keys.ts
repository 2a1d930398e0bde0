import type { AccountState } from '../../account/account-state.js'
import { SCOPES, type Scope } from '../../account/api-keys.js'
import { allowlistEntryProblem, MAX_ALLOWLIST_ENTRIES } from '../../account/ip-allowlist.js'
import { KEY_EXPIRY_DAYS, type KeyRecord, type NewKeyInput } from '../../account/key-registry.js'
import { bodyObject, Fields } from '../../shared/fields.js'
import { ok, type Route } from './route.js'

/** A key as the control routes show it: never the secret, except on create and roll. */
const keyJson = (key: KeyRecord) => ({
  id: key.id,
  name: key.name,
  last4: key.key.slice(-4),
  scopes: key.scopes,
  ipAllowlist: key.ipAllowlist,
  expiresAt: key.expiresAt === null ? null : new Date(key.expiresAt).toISOString(),
  status: key.status,
})

/** The body of `POST /emulator/keys`, or 400 with one entry per bad field. */
export function parseKeyInput(raw: unknown): NewKeyInput {
  const body = bodyObject(raw)
  const fields = new Fields()
  const scopes = body.scopes
  if (scopes === undefined || scopes === null || (Array.isArray(scopes) && scopes.length === 0)) {
    fields.required('scopes')
  } else if (
    !Array.isArray(scopes) ||
    !scopes.every((scope) => (SCOPES as readonly unknown[]).includes(scope))
  ) {
    fields.invalid('scopes', `must be an array of scopes: ${SCOPES.join(', ')}`)
  }
  // The dashboard takes a comma-separated list; an array is accepted too.
  const list =
    typeof body.ipAllowlist === 'string'
      ? body.ipAllowlist
          .split(',')
          .map((entry) => entry.trim())
          .filter((entry) => entry !== '')
      : body.ipAllowlist
  if (list !== undefined && list !== null) {
    if (!Array.isArray(list) || !list.every((entry) => typeof entry === 'string')) {
      fields.invalid('ipAllowlist', 'must be a list of addresses and CIDR ranges')
    } else if (list.length > MAX_ALLOWLIST_ENTRIES) {
      fields.invalid('ipAllowlist', `must have at most ${MAX_ALLOWLIST_ENTRIES} entries`)
    } else {
      const problem = list.map(allowlistEntryProblem).find((reason) => reason !== undefined)
      if (problem) fields.invalid('ipAllowlist', `has an entry that is not allowed: ${problem}`)
    }
  }
  const days = body.expiresInDays
  if (
    days !== undefined &&
    days !== null &&
    !(KEY_EXPIRY_DAYS as readonly unknown[]).includes(days)
  ) {
    fields.invalid('expiresInDays', `must be one of ${KEY_EXPIRY_DAYS.join(', ')}`)
  }
  if (body.name !== undefined && typeof body.name !== 'string')
    fields.invalid('name', 'must be a string')
  fields.done()
  return {
    scopes: [...new Set(scopes as Scope[])],
    ...(Array.isArray(list) && list.length > 0 ? { ipAllowlist: list as string[] } : {}),
    ...(typeof days === 'number'
      ? { expiresInDays: days as NewKeyInput['expiresInDays'] & number }
      : {}),
    ...(typeof body.name === 'string' ? { name: body.name } : {}),
  }
}

/** The control routes of keys (`/emulator/keys...`). Any key of the account may call them. */
export function createKeyRoutes({ keys }: AccountState): Route[] {
  const action = (name: 'pause' | 'resume' | 'revoke', done: string): Route => ({
    method: 'POST',
    pattern: new RegExp(`^/emulator/keys/([^/]+)/${name}$`),
    access: 'key',
    control: true,
    handle: ({ params }) => {
      const key = keys[name](params[0] as string)
      return ok(keyJson(key), `API key ${key.id} ${done}.`)
    },
  })
  return [
    {
      method: 'GET',
      pattern: /^\/emulator\/keys$/,
      access: 'key',
      control: true,
      handle: () => ok(keys.list().map(keyJson), 'OK'),
    },
    {
      method: 'POST',
      pattern: /^\/emulator\/keys$/,
      access: 'key',
      control: true,
      body: true,
      handle({ body }) {
        const key = keys.create(parseKeyInput(body))
        return ok({ ...keyJson(key), key: key.key }, `API key ${key.id} created.`, 201)
      },
    },
    action('pause', 'paused'),
    action('resume', 'resumed'),
    action('revoke', 'revoked'),
    {
      method: 'POST',
      pattern: /^\/emulator\/keys\/([^/]+)\/roll$/,
      access: 'key',
      control: true,
      handle({ params }) {
        const key = keys.roll(params[0] as string)
        return ok(
          { ...keyJson(key), key: key.key },
          `API key ${key.id} rolled; the old secret gets 401.`,
        )
      },
    },
  ]
}

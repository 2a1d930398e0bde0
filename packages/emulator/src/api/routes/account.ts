import type { AccountState } from '../../account/account-state.js'
import { bodyObject, Fields } from '../../shared/fields.js'
import { iso, ok, path, type Route } from './route.js'

/** `{ status: "active" | "inactive" }` of `POST /emulator/account`, or 400. */
function parseAccountStatus(raw: unknown): 'active' | 'inactive' {
  const body = bodyObject(raw)
  const fields = new Fields()
  if (body.status === undefined || body.status === null) fields.required('status')
  else if (body.status !== 'active' && body.status !== 'inactive') {
    fields.invalid('status', 'must be active or inactive')
  }
  fields.done()
  return body.status as 'active' | 'inactive'
}

/** `/v1/health`, `/v1/me` (the calling key) and the control route `POST /emulator/account`. */
export function createAccountRoutes({ keys }: AccountState): Route[] {
  return [
    {
      method: 'GET',
      pattern: path('/v1/health'),
      access: 'public',
      handle: () => ok({ status: 'ok' }, 'The API is up.'),
    },
    {
      method: 'GET',
      pattern: path('/v1/me'),
      access: 'key',
      quotaExempt: true,
      handle: ({ key, req }) =>
        ok({
          ...(key.id === undefined ? {} : { id: key.id }),
          name: key.name ?? 'emulator',
          last4: key.key.slice(-4),
          scopes: key.scopes,
          ipAllowlist: key.ipAllowlist ?? [],
          expiresAt: iso(key.expiresAt ?? null),
          callerIp: req.socket.remoteAddress ?? null,
        }),
    },
    {
      method: 'POST',
      pattern: path('/emulator/account'),
      access: 'key',
      control: true,
      body: true,
      handle({ body }) {
        const status = parseAccountStatus(body)
        keys.setAccount(status)
        return ok({ status }, `Account ${status}.`)
      },
    },
  ]
}

import type { AccountState } from '../../account/account-state.js'
import { bodyObject, Fields } from '../../shared/fields.js'
import { ok, path, type Route } from './route.js'

/** `{ domain, approved, verified, own? }` of `POST /emulator/channels`, or 400. */
function parseChannelInput(raw: unknown) {
  const body = bodyObject(raw)
  const fields = new Fields()
  if (body.domain === undefined || body.domain === null) fields.required('domain')
  else if (typeof body.domain !== 'string' || !/^[a-z0-9.-]+\.[a-z0-9-]+$/i.test(body.domain)) {
    fields.invalid('domain', 'must be a domain name such as blog.example')
  }
  for (const name of ['approved', 'verified', 'own'] as const) {
    if (body[name] !== undefined && typeof body[name] !== 'boolean') {
      fields.invalid(name, 'must be true or false')
    }
  }
  fields.done()
  return {
    domain: body.domain as string,
    // Absent means a channel that can apply: the common case in a test.
    approved: body.approved !== false,
    verified: body.verified !== false,
    own: body.own !== false,
  }
}

/** The control route `POST /emulator/channels`: a channel the account owns (or not). */
export function createChannelRoutes({ channels }: AccountState): Route[] {
  return [
    {
      method: 'POST',
      pattern: path('/emulator/channels'),
      access: 'key',
      control: true,
      body: true,
      handle({ body }) {
        const channel = channels.add(parseChannelInput(body))
        return ok({ id: channel.id }, `Channel ${channel.id} added.`, 201)
      },
    },
  ]
}

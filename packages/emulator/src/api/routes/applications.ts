import type { AccountState } from '../../account/account-state.js'
import { applicationJson } from '../../account/applications.js'
import { bodyObject, Fields } from '../../shared/fields.js'
import { paginate } from '../paging.js'
import { parseApplicationInput, parseApplicationQuery } from '../program-query.js'
import { numericId, ok, path, type Route } from './route.js'

/** `{ status: "approved" | "rejected" }` of the review route, or 400. */
function parseDecision(raw: unknown): 'approved' | 'rejected' {
  const body = bodyObject(raw)
  const fields = new Fields()
  if (body.status === undefined || body.status === null) fields.required('status')
  else if (body.status !== 'approved' && body.status !== 'rejected') {
    fields.invalid('status', 'must be approved or rejected')
  }
  fields.done()
  return body.status as 'approved' | 'rejected'
}

/**
 * `/v1/programs/applications` (list, apply) and the control route that reviews an
 * application. Before `/v1/programs/{id}` in the route list: its path would match.
 */
export function createApplicationRoutes(state: AccountState): Route[] {
  const { catalogue, applications } = state
  return [
    {
      method: 'GET',
      pattern: path('/v1/programs/applications'),
      access: 'programs:read',
      handle({ query }) {
        const filters = parseApplicationQuery(query)
        const all = applications
          .list()
          .filter(
            (row) =>
              (filters.status === undefined || row.status === filters.status) &&
              (filters.programId === undefined || row.programId === filters.programId) &&
              (filters.channelId === undefined || row.channelId === filters.channelId),
          )
        const { rows, pagination } = paginate(all, filters.page, filters.size)
        const data = rows.map((row) =>
          applicationJson(row, catalogue.find(row.programId)?.merchantName ?? null),
        )
        return { ...ok(data), extra: { pagination } }
      },
    },
    {
      method: 'POST',
      pattern: path('/v1/programs/applications'),
      access: 'programs:write',
      body: true,
      handle({ body }) {
        const input = parseApplicationInput(body)
        const application = applications.apply(input.programId, input.channelId)
        return ok(
          applicationJson(application),
          application.status === 'approved'
            ? 'Approved: tracking links can be minted now.'
            : 'Application pending: the team reviews it.',
          201,
        )
      },
    },
    {
      method: 'POST',
      pattern: path('/emulator/applications/{id}/decision'),
      access: 'key',
      control: true,
      body: true,
      handle({ params, body }) {
        const status = parseDecision(body)
        const application = applications.decide(
          numericId(params[0], 'application_not_found'),
          status,
        )
        return ok(applicationJson(application), `Application ${status}.`)
      },
    },
  ]
}

import type { AccountState } from '../../account/account-state.js'
import { applicationJson } from '../../account/applications.js'
import { categorySlug, type Program, programJson } from '../../account/catalogue.js'
import { ApiError } from '../api-error.js'
import { paginate } from '../paging.js'
import { parseProgramInput } from '../program-input.js'
import {
  type ProgramQuery,
  parseApplicationInput,
  parseApplicationQuery,
  parseChannelParam,
  parseProgramQuery,
} from '../program-query.js'
import { bodyObject, Fields } from '../validation.js'
import type { Route, RouteAnswer } from './route-table.js'

const ok = (data: unknown, message = 'OK', status = 200): RouteAnswer => ({ status, message, data })
const ID = '([^/]+)'
const path = (pattern: string) => new RegExp(`^${pattern.replaceAll('{id}', ID)}$`)
/** A path id that is a whole number, or the 404 `code` (a malformed id names nothing). */
function pathId(value: string | undefined, code: 'program_not_found' | 'application_not_found') {
  if (value !== undefined && /^\d{1,15}$/.test(value)) return Number(value)
  throw new ApiError(
    code,
    `No ${code === 'program_not_found' ? 'program' : 'application'} ${value}.`,
  )
}

function matches(program: Program, query: ProgramQuery): boolean {
  const search = query.search?.toLowerCase()
  if (
    search !== undefined &&
    !(program.merchantName ?? '').toLowerCase().includes(search) &&
    !(program.merchantDomain ?? '').includes(search)
  ) {
    return false
  }
  if (query.category !== undefined) {
    if (program.category === null) return false
    if (categorySlug(program.category) !== categorySlug(query.category)) return false
  }
  if (query.payoutType !== undefined && program.payoutType !== query.payoutType) return false
  return query.approvalType === undefined || program.approvalType === query.approvalType
}

/** `/v1/programs`, applications, and the control routes for programs, channels and reviews. */
export function createProgramRoutes(state: AccountState): Route[] {
  const { catalogue, channels, applications } = state
  // A channelId that is not the caller's names nothing: 404, as for applying.
  const scope = (channelId: number | undefined) =>
    channelId === undefined ? undefined : channels.own(channelId).id

  return [
    {
      method: 'GET',
      pattern: path('/v1/programs'),
      access: 'programs:read',
      handle({ query }) {
        const filters = parseProgramQuery(query)
        const channelId = scope(filters.channelId)
        const all = catalogue
          .list()
          .filter((program) => matches(program, filters))
          .map((program) => programJson(program, applications.statusOf(program, channelId), false))
          .filter((program) => filters.status === undefined || program.status === filters.status)
        const { rows, pagination } = paginate(all, filters.page, filters.size)
        return { ...ok(rows), extra: { pagination } }
      },
    },
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
      method: 'GET',
      pattern: path('/v1/programs/{id}'),
      access: 'programs:read',
      handle({ params, query }) {
        const channelId = scope(parseChannelParam(query))
        const program = catalogue.get(pathId(params[0], 'program_not_found'))
        return ok(programJson(program, applications.statusOf(program, channelId), true))
      },
    },
  ]
}

/** The control routes: add and remove programs, add channels, review applications. */
export function createProgramControlRoutes(state: AccountState): Route[] {
  const { catalogue, channels, applications } = state
  return [
    {
      method: 'POST',
      pattern: path('/emulator/programs'),
      access: 'key',
      control: true,
      body: true,
      handle({ body }) {
        const program = catalogue.add(parseProgramInput(body))
        return ok(
          programJson(program, applications.statusOf(program, undefined), true),
          `Program ${program.id} added.`,
          201,
        )
      },
    },
    {
      method: 'DELETE',
      pattern: path('/emulator/programs/{id}'),
      access: 'key',
      control: true,
      handle({ params }) {
        const program = catalogue.deactivate(pathId(params[0], 'program_not_found'))
        return ok({ id: program.id, active: false }, `Program ${program.id} deactivated.`)
      },
    },
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
    {
      method: 'POST',
      pattern: path('/emulator/applications/{id}/decision'),
      access: 'key',
      control: true,
      body: true,
      handle({ params, body }) {
        const status = parseDecision(body)
        const application = applications.decide(pathId(params[0], 'application_not_found'), status)
        return ok(applicationJson(application), `Application ${status}.`)
      },
    },
  ]
}

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

import type { AccountState } from '../../account/account-state.js'
import { categorySlug, type Program, programJson } from '../../account/catalogue.js'
import { parseProgramInput } from '../../account/program-input.js'
import { paginate } from '../paging.js'
import { type ProgramQuery, parseChannelParam, parseProgramQuery } from '../program-query.js'
import { numericId, ok, path, type Route } from './route.js'

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

/** `/v1/programs` and `/v1/programs/{id}`: the catalogue with the caller's status per channel. */
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
      pattern: path('/v1/programs/{id}'),
      access: 'programs:read',
      handle({ params, query }) {
        const channelId = scope(parseChannelParam(query))
        const program = catalogue.get(numericId(params[0], 'program_not_found'))
        return ok(programJson(program, applications.statusOf(program, channelId), true))
      },
    },
  ]
}

/** The control routes of the catalogue: add a program, deactivate one. */
export function createProgramControlRoutes(state: AccountState): Route[] {
  const { catalogue, applications } = state
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
        const program = catalogue.deactivate(numericId(params[0], 'program_not_found'))
        return ok({ id: program.id, active: false }, `Program ${program.id} deactivated.`)
      },
    },
  ]
}

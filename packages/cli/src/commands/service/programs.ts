import type { ProgramSummary } from '@affiliate-webhooks/client'
import { APPROVAL_TYPES, PAYOUT_TYPES, PROGRAM_STATUSES } from '@affiliate-webhooks/core/internal'
import { flag, str, type Values } from '../../framework/command.js'
import { EXIT, output, UsageError } from '../../framework/io.js'
import { costText } from '../../text/service/pacing-text.js'
import { formatProgram, formatPrograms } from '../../text/service/program-text.js'
import { manageCommand, positional, withClient } from '../support/service-command.js'

/** A flag that must be one of `allowed`, or undefined when absent. */
export function oneOf(values: Values, flag: string, allowed: readonly string[]) {
  const value = str(values, flag)
  if (value !== undefined && !allowed.includes(value)) {
    throw new UsageError(`--${flag} must be one of ${allowed.join(', ')}, not "${value}"`)
  }
  return value
}

/** A flag or argument that must be a whole number (an id), or undefined when absent. */
export function idOf(text: string | undefined, what: string): number | undefined {
  if (text === undefined) return undefined
  if (!/^\d{1,15}$/.test(text))
    throw new UsageError(`${what} must be a whole number, not "${text}"`)
  return Number(text)
}

export const programs = manageCommand({
  name: 'programs',
  summary: 'browse the program catalogue: list with filters, get one',
  usage: [
    `programs list [--search TEXT] [--category SLUG] [--payout-type cps|cpc]
                                       [--approval auto|manual] [--channel ID] [--status STATUS]`,
    'programs get <programId> [--channel ID]',
  ],
  about: `list: every program matching the filters (combined with AND), newest first,
across all pages, each once. get: one program with its description, regions
and logo. The status is your application state: for --channel, or the best
across your channels without it.

list: ${costText('programs list')}`,
  options: {
    search: flag.text('TEXT', 'merchant name or domain contains TEXT'),
    category: flag.text('SLUG', 'a category slug (home_garden)'),
    'payout-type': flag.text('TYPE', PAYOUT_TYPES.join(' or ')),
    approval: flag.text('TYPE', APPROVAL_TYPES.join(' or ')),
    channel: flag.text('ID', 'report the status for this channel'),
    status: flag.text('STATUS', PROGRAM_STATUSES.join(', ')),
  },
  async run(values, io, positionals) {
    const action = positional(positionals, 0, 'sub-command: list or get')
    const channelId = idOf(str(values, 'channel'), '--channel')
    if (action === 'get') {
      const id = idOf(positional(positionals, 1, 'program id'), 'program id') as number
      if (positionals.length > 2) throw new UsageError(`unexpected argument ${positionals[2]}`)
      return withClient('programs get', values, io, async (api) => {
        const program = await api.programs.get(id, { channelId })
        output(io, values, program, formatProgram(program))
        return EXIT.ok
      })
    }
    if (action !== 'list') throw new UsageError(`unknown sub-command "${action}"; list or get`)
    if (positionals.length > 1) throw new UsageError(`unexpected argument ${positionals[1]}`)
    const filters = {
      search: str(values, 'search'),
      category: str(values, 'category'),
      payoutType: oneOf(values, 'payout-type', PAYOUT_TYPES),
      approvalType: oneOf(values, 'approval', APPROVAL_TYPES),
      status: oneOf(values, 'status', PROGRAM_STATUSES),
      channelId,
    }
    return withClient('programs list', values, io, async (api) => {
      const found: ProgramSummary[] = []
      for await (const program of api.programs.list(filters)) found.push(program)
      output(io, values, found, formatPrograms(found))
      return EXIT.ok
    })
  },
})

import type { ProgramSummary } from '@affiliate-webhooks/client'
import { APPROVAL_TYPES, PAYOUT_TYPES, PROGRAM_STATUSES } from '@affiliate-webhooks/core/internal'
import type { Handler } from '../../framework/command.js'
import { EXIT, output, UsageError } from '../../framework/io.js'
import { formatProgram, formatPrograms } from '../../text/service/program-text.js'
import { positional, withClient } from '../support/service-command.js'
import type { programs } from './programs.js'

/** A flag that must be one of `allowed`, or undefined when absent. */
export function oneOf(value: string | undefined, flag: string, allowed: readonly string[]) {
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

/** Runs `programs`. */
export const run: Handler<typeof programs.options> = async (values, io, positionals) => {
  const action = positional(positionals, 0, 'sub-command: list or get')
  const channelId = idOf(values.channel, '--channel')
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
    search: values.search,
    category: values.category,
    payoutType: oneOf(values['payout-type'], 'payout-type', PAYOUT_TYPES),
    approvalType: oneOf(values.approval, 'approval', APPROVAL_TYPES),
    status: oneOf(values.status, 'status', PROGRAM_STATUSES),
    channelId,
  }
  return withClient('programs list', values, io, async (api) => {
    const found: ProgramSummary[] = []
    for await (const program of api.programs.list(filters)) found.push(program)
    output(io, values, found, formatPrograms(found))
    return EXIT.ok
  })
}

import { type ApplicationListEntry, isDuplicateApplicationError } from '@affiliate-webhooks/client'
import { APPLICATION_STATUSES } from '@affiliate-webhooks/core/internal'
import { characterCount, MAX_NOTE_LENGTH } from '@affiliate-webhooks/emulator/internal'
import type { Handler } from '../../framework/command.js'
import { EXIT, output, UsageError } from '../../framework/io.js'
import { formatApplications, formatApplied } from '../../text/service/program-text.js'
import { EXIT_MANAGE, positional, withClient } from '../support/service-command.js'
import type { applications, apply } from './applications.js'
import { idOf, oneOf } from './programs.run.js'

const MAX_NOTE = MAX_NOTE_LENGTH

/** Runs `apply`. */
export const runApply: Handler<typeof apply.options> = async (values, io, positionals) => {
  const programId = idOf(positional(positionals, 0, 'program id'), 'program id') as number
  if (positionals.length > 1) throw new UsageError(`unexpected argument ${positionals[1]}`)
  const channelId = idOf(values.channel, '--channel')
  if (channelId === undefined)
    throw new UsageError('missing --channel ID: the channel that applies')
  const note = values.note
  if (note !== undefined && characterCount(note) > MAX_NOTE) {
    throw new UsageError(`--note must be at most ${MAX_NOTE} characters`)
  }
  return withClient('apply', values, io, async (api) => {
    try {
      const application = await api.applications.create({
        programId,
        channelId,
        ...(note === undefined ? {} : { note }),
      })
      output(io, values, application, formatApplied(application, programId, channelId))
      return EXIT.ok
    } catch (error) {
      if (!isDuplicateApplicationError(error)) throw error
      io.stderr.write(
        `affiliate-webhooks apply: channel ${channelId} already applied to program ${programId}: application ${error.applicationId} is ${error.applicationStatus} (a rejection cannot be re-applied through the API)\n`,
      )
      return EXIT_MANAGE.refused
    }
  })
}

/** Runs `applications`. */
export const runApplications: Handler<typeof applications.options> = async (
  values,
  io,
  positionals,
) => {
  const action = positional(positionals, 0, 'sub-command: list')
  if (action !== 'list') throw new UsageError(`unknown sub-command "${action}"; list`)
  if (positionals.length > 1) throw new UsageError(`unexpected argument ${positionals[1]}`)
  const status = oneOf(values.status, 'status', APPLICATION_STATUSES)
  const programId = idOf(values.program, '--program')
  const channelId = idOf(values.channel, '--channel')
  return withClient('applications list', values, io, async (api) => {
    const found: ApplicationListEntry[] = []
    for await (const row of api.applications.list({
      ...(status === undefined ? {} : { status }),
      ...(programId === undefined ? {} : { programId }),
      ...(channelId === undefined ? {} : { channelId }),
    })) {
      found.push(row)
    }
    output(io, values, found, formatApplications(found))
    return EXIT.ok
  })
}

import { type ApplicationListEntry, isDuplicateApplicationError } from '@affiliate-webhooks/client'
import { APPLICATION_STATUSES } from '@affiliate-webhooks/core/internal'
import { characterCount, MAX_NOTE_LENGTH } from '@affiliate-webhooks/emulator/internal'
import { flag, str } from '../../framework/command.js'
import { EXIT, output, UsageError } from '../../framework/io.js'
import { costText } from '../../text/service/pacing-text.js'
import { formatApplications, formatApplied } from '../../text/service/program-text.js'
import { EXIT_MANAGE, manageCommand, positional, withClient } from '../support/service-command.js'
import { idOf, oneOf } from './programs.js'

const MAX_NOTE = MAX_NOTE_LENGTH

export const apply = manageCommand({
  name: 'apply',
  summary: 'apply to a program for one of your channels',
  usage: ['apply <programId> --channel ID [--note TEXT]'],
  about: `Applies the channel to the program: an auto program is approved at once, a
manual one is pending until the team reviews it. A channel that applied before
(in any state) is refused with exit code 3 and the existing application; a
rejection cannot be re-applied.`,
  options: {
    channel: flag.text('ID', 'one of your channels, approved and verified (required)'),
    note: flag.text('TEXT', `up to ${MAX_NOTE} characters for the reviewer (not stored)`),
  },
  async run(values, io, positionals) {
    const programId = idOf(positional(positionals, 0, 'program id'), 'program id') as number
    if (positionals.length > 1) throw new UsageError(`unexpected argument ${positionals[1]}`)
    const channelId = idOf(str(values, 'channel'), '--channel')
    if (channelId === undefined)
      throw new UsageError('missing --channel ID: the channel that applies')
    const note = str(values, 'note')
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
  },
})

export const applications = manageCommand({
  name: 'applications',
  summary: 'your applications to programs, newest first',
  usage: ['applications list [--status STATUS] [--program ID] [--channel ID]'],
  about: `Every application of the account across channels, newest first, across all
pages, with the merchant's name.

${costText('applications list')}`,
  options: {
    status: flag.text('STATUS', APPLICATION_STATUSES.join(', ')),
    program: flag.text('ID', 'only this program'),
    channel: flag.text('ID', 'only this channel'),
  },
  async run(values, io, positionals) {
    const action = positional(positionals, 0, 'sub-command: list')
    if (action !== 'list') throw new UsageError(`unknown sub-command "${action}"; list`)
    if (positionals.length > 1) throw new UsageError(`unexpected argument ${positionals[1]}`)
    const status = oneOf(values, 'status', APPLICATION_STATUSES)
    const programId = idOf(str(values, 'program'), '--program')
    const channelId = idOf(str(values, 'channel'), '--channel')
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
  },
})

import type { Handler } from '../../framework/command.js'
import { EXIT, output } from '../../framework/io.js'
import { formatClockAdvance } from '../../text/service/pacing-text.js'
import { onlyArgument, parseDuration, withClient } from '../support/service-command.js'
import type { emulatorClock } from './emulator-clock.js'

/**
 * `emulator clock +1h`: moves a running emulator's clock (POST /emulator/clock),
 * with the management commands' key and address. Reached through `emulator clock`.
 */

/** Runs `emulatorClock`. */
export const run: Handler<typeof emulatorClock.options> = async (values, io, positionals) => {
  const text = onlyArgument(positionals, 'duration (+1h)')
  const ms = parseDuration('duration', text.replace(/^\+/, ''))
  return withClient('emulator clock', values, io, async (api) => {
    const moved = await api.emulator.advanceClock(ms)
    output(io, values, moved, formatClockAdvance(text.replace(/^\+/, ''), moved))
    return EXIT.ok
  })
}

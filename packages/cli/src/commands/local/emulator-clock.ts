import { BIN } from '../../framework/command.js'
import { EXIT, output } from '../../framework/io.js'
import { formatClockAdvance } from '../../text/service/pacing-text.js'
import {
  manageCommand,
  onlyArgument,
  parseDuration,
  withClient,
} from '../support/service-command.js'

/**
 * `emulator clock +1h`: moves a running emulator's clock (POST /emulator/clock),
 * with the management commands' key and address. Reached through `emulator clock`.
 */
export const emulatorClock = manageCommand({
  name: 'emulator clock',
  summary: "move the running emulator's clock forward",
  usage: ['emulator clock +DURATION'],
  about: `Moves the clock of the emulator at $AFFILIATE_API_URL forward by DURATION of
service time (+90s, +10m, +1h, +2d; the + may be left out): every attempt that
comes due goes out, batch by batch, the attempts of one batch together, and the
command returns once the last has settled. The key comes from
$AFFILIATE_API_KEY or --api-key-file, as for the management commands. The real
service has no clock to move: it answers 404 route_not_found.`,
  options: {},
  footer: `Examples:
  ${BIN} emulator clock +1m     the first retry of a failed attempt
  ${BIN} emulator clock +2d     the whole retry schedule (about 45 h)`,
  async run(values, io, positionals) {
    const text = onlyArgument(positionals, 'duration (+1h)')
    const ms = parseDuration('duration', text.replace(/^\+/, ''))
    return withClient('emulator clock', values, io, async (api) => {
      const moved = await api.emulator.advanceClock(ms)
      output(io, values, moved, formatClockAdvance(text.replace(/^\+/, ''), moved))
      return EXIT.ok
    })
  },
})

import { BIN } from '../../framework/command.js'
import { manageCommand } from '../support/manage-options.js'

export const emulatorClock = manageCommand({
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
})

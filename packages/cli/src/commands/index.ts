import type { Command } from '../framework/command.js'
import { completion } from '../framework/completion.js'
import { emulator } from './local/emulator.js'
import { listen } from './local/listen.js'
import { send } from './local/send.js'
import { sign } from './local/sign.js'
import { simulate } from './local/simulate.js'
import { trigger } from './local/trigger.js'
import { verify } from './local/verify.js'
import { applications, apply } from './service/applications.js'
import { deliveries } from './service/deliveries.js'
import { doctor } from './service/doctor.js'
import { endpoints } from './service/endpoints.js'
import { programs } from './service/programs.js'
import { recover } from './service/recover.js'
import { replay } from './service/replay.js'
import { test } from './service/test-event.js'
import { queue } from './storage/queue.js'
import { rotate } from './storage/rotate.js'
import { secrets } from './storage/secrets.js'
import { sql } from './storage/sql.js'

/**
 * Every command of the CLI, in the order `--help` lists them. `completion` reads
 * this list when it runs, so it is handed a getter rather than importing it.
 */
export const COMMANDS: readonly Command[] = [
  sign,
  send,
  verify,
  simulate,
  listen,
  emulator,
  endpoints,
  test,
  deliveries,
  replay,
  recover,
  doctor,
  rotate,
  queue,
  programs,
  apply,
  applications,
  sql,
  trigger,
  secrets,
  completion(() => COMMANDS),
]

import { type Command, command } from '../framework/command.js'
import { completion } from '../framework/completion.js'

// The command table: each command's name and summary (all the top-level --help
// reads), its declaration (imported when the command is named: its --help,
// parsing, completion) and its code (imported when it runs). So --help and
// --version load no command and no package. A handler's flags are typed from the
// declaration its row imports: a misspelt flag fails typecheck.

const clock = command(
  'clock',
  "move the running emulator's clock forward",
  async () => (await import('./local/emulator-clock.js')).emulatorClock,
  async () => (await import('./local/emulator-clock.run.js')).run,
)

/**
 * Every command of the CLI, in the order `--help` lists them. `completion` reads
 * this list when it runs, so it is handed a getter rather than importing it.
 */
export const COMMANDS: readonly Command[] = [
  command(
    'init',
    'set the receiver up in your app: route, store, .env, packages; shows the plan first',
    async () => (await import('./local/init.js')).init,
    async () => (await import('./local/init.run.js')).run,
  ),
  command(
    'sign',
    'print the Service-Signature for a body and secret',
    async () => (await import('./local/sign.js')).sign,
    async () => (await import('./local/sign.run.js')).run,
  ),
  command(
    'send',
    'send one signed event to a URL and print the answer',
    async () => (await import('./local/send.js')).send,
    async () => (await import('./local/send.run.js')).run,
  ),
  command(
    'verify',
    'check a captured Service-Signature and body, and say why they fail',
    async () => (await import('./local/verify.js')).verify,
    async () => (await import('./local/verify.run.js')).run,
  ),
  command(
    'simulate',
    'run conversion lifecycles at a URL under the service delivery rules',
    async () => (await import('./local/simulate.js')).simulate,
    async () => (await import('./local/simulate.run.js')).run,
  ),
  command(
    'listen',
    'relay deliveries to your app unchanged, printing and saving each one',
    async () => (await import('./local/listen.js')).listen,
    async () => (await import('./local/listen.run.js')).run,
  ),
  command(
    'emulator',
    "run the service's API (webhooks, programs, keys) and delivery engine locally",
    async () => ({ ...(await import('./local/emulator.js')).emulator, subcommands: [clock] }),
    async () => (await import('./local/emulator.run.js')).run,
  ),
  command(
    'endpoints',
    'list, create, change, enable, disable or delete webhook endpoints',
    async () => (await import('./service/endpoints.js')).endpoints,
    async () => (await import('./service/endpoints.run.js')).run,
  ),
  command(
    'test',
    'send the test event to an endpoint; --wait follows its delivery',
    async () => (await import('./service/test-event.js')).test,
    async () => (await import('./service/test-event.run.js')).run,
  ),
  command(
    'deliveries',
    "an endpoint's delivery history, newest first",
    async () => (await import('./service/deliveries.js')).deliveries,
    async () => (await import('./service/deliveries.run.js')).run,
  ),
  command(
    'replay',
    'replay one delivery, or every failed one, under the rate limit',
    async () => (await import('./service/replay.js')).replay,
    async () => (await import('./service/replay.run.js')).run,
  ),
  command(
    'recover',
    're-enable a disabled endpoint and replay what failed meanwhile',
    async () => (await import('./service/recover.js')).recover,
    async () => (await import('./service/recover.run.js')).run,
  ),
  command(
    'doctor',
    'explain in words what is wrong with an endpoint, and the command that fixes it',
    async () => (await import('./service/doctor.js')).doctor,
    async () => (await import('./service/doctor.run.js')).run,
  ),
  command(
    'rotate',
    "rotate an endpoint's secret with no downtime (new secret first in Redis, old kept for a grace period)",
    async () => (await import('./storage/rotate.js')).rotate,
    async () => (await import('./storage/rotate.run.js')).run,
  ),
  command(
    'queue',
    'inspect the BullMQ hand-off queue: counts, failed jobs, retry',
    async () => (await import('./storage/queue.js')).queue,
    async () => (await import('./storage/queue.run.js')).run,
  ),
  command(
    'programs',
    'browse the program catalogue: list with filters, get one',
    async () => (await import('./service/programs.js')).programs,
    async () => (await import('./service/programs.run.js')).run,
  ),
  command(
    'apply',
    'apply to a program for one of your channels',
    async () => (await import('./service/applications.js')).apply,
    async () => (await import('./service/applications.run.js')).runApply,
  ),
  command(
    'applications',
    'your applications to programs, newest first',
    async () => (await import('./service/applications.js')).applications,
    async () => (await import('./service/applications.run.js')).runApplications,
  ),
  command(
    'sql',
    'print the tables of the Postgres or MySQL store, for a migration',
    async () => (await import('./storage/sql.js')).sql,
    async () => (await import('./storage/sql.run.js')).run,
  ),
  command(
    'trigger',
    'make the emulator emit a conversion event; --wait shows its delivery',
    async () => (await import('./local/trigger.js')).trigger,
    async () => (await import('./local/trigger.run.js')).run,
  ),
  command(
    'secrets',
    "store an endpoint's secret in Redis, where redisSecretSource reads it",
    async () => (await import('./storage/secrets.js')).secrets,
    async () => (await import('./storage/secrets.run.js')).run,
  ),
  completion(() => COMMANDS),
]

/** Every command with its declaration imported (completion, tests). */
export const loadCommands = () =>
  Promise.all(COMMANDS.map(async (entry) => ({ ...entry, ...(await entry.spec()) })))

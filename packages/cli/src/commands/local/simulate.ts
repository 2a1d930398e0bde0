import { ANSWER_TIMEOUT_MS, DISABLE_AFTER_FAILURES } from '@affiliate-webhooks/emulator'
import { SIMULATION_DEFAULTS } from '@affiliate-webhooks/emulator/internal'
import { COMMON, defineCommand, flag } from '../../framework/command.js'

// The command's own choices: a short, busy run an hour of schedule a second.
export const DEFAULTS = {
  ...SIMULATION_DEFAULTS,
  conversions: 20,
  duplicates: 0.1,
  reorder: 0.1,
  timeScale: 3600,
} as const

export const simulate = defineCommand({
  usage: [
    `simulate --url URL [--conversions N] [--duplicates RATE] [--reorder RATE]
                                   [--concurrency C] [--time-scale S] [--disable-after N|off]
                                   [--secret SECRET] [--json]`,
  ],
  about: `Sends a stream of conversion lifecycles (created -> approved -> available ->
ready_for_payout, about one in five rejected on the way) to your endpoint the way
the service does: deliveries go out in batches every minute, each attempt is
signed afresh, anything but a 2xx within 10 s is retried at +1 min, +5 min,
+30 min, +2 h, +6 h, +12 h, +24 h (8 attempts, then the delivery failed), and 20
failed attempts in a row disable the endpoint. Some events arrive twice
(replays) and some after a newer event of their conversion (reordered).`,
  options: {
    url: flag.text('URL', "the receiver's webhook URL (required)"),
    conversions: flag.number(
      'N',
      `conversion lifecycles to run (default ${DEFAULTS.conversions})`,
      { min: 1, integer: true },
    ),
    duplicates: flag.number(
      'RATE',
      `share of events replayed after they succeeded, 0 to 1 (default ${DEFAULTS.duplicates})`,
      { min: 0, max: 1 },
    ),
    reorder: flag.number(
      'RATE',
      `share of events held back until after the next event of\ntheir conversion, 0 to 1 (default ${DEFAULTS.reorder})`,
      { min: 0, max: 1 },
    ),
    concurrency: flag.number('C', `attempts in flight at once (default ${DEFAULTS.concurrency})`, {
      min: 1,
      max: 1000,
      integer: true,
    }),
    'time-scale': flag.number(
      'S',
      `service time runs S times faster (default ${DEFAULTS.timeScale}: an hour of\nschedule takes a second; 1 is the service's own pace)`,
      { min: Number.MIN_VALUE },
    ),
    'disable-after': flag.number(
      'N|off',
      `failed attempts in a row that disable the endpoint (default ${DISABLE_AFTER_FAILURES},\nthe service's rule); off never disables it (crash tests under --time-scale)`,
      {
        min: 1,
        integer: true,
        off: true,
        hint: `--disable-after off never disables the endpoint during the run; a number N disables it after N failed attempts in a row (the service: ${DISABLE_AFTER_FAILURES})`,
      },
    ),
    timeout: flag.number(
      'MS',
      `real ms a receiver has to answer (default ${ANSWER_TIMEOUT_MS}; not scaled)`,
      { min: 1 },
    ),
    'reject-rate': flag.number(
      'RATE',
      `share of conversions rejected on the way (default ${DEFAULTS.rejectRate})`,
      { min: 0, max: 1 },
    ),
    window: flag.number(
      'MIN',
      'conversions start spread over MIN minutes of service time\n(default half a minute per conversion, at least 10)',
      { min: 0 },
    ),
    seed: flag.number('N', "repeat a run exactly (the summary prints each run's seed)", {
      min: 0,
      max: 2 ** 32 - 1,
      integer: true,
    }),
    ...COMMON,
    quiet: flag.bool('no progress line'),
    json: flag.bool('print the summary as JSON'),
  },
  footer: `While it runs a progress line is written to stderr; the summary table goes to stdout.

Example:
  affiliate-webhooks simulate --url http://localhost:3000/hooks --conversions 200 \\
    --duplicates 0.2 --reorder 0.2 --concurrency 16 --time-scale 3600

Under --time-scale a receiver down for a few real seconds is down for minutes or
hours of service time, which can be long enough to fail 20 attempts in a row:
the endpoint is disabled as the service would disable it, and the rest of those
conversions' events are never delivered. To test a crash or a restart of your
receiver, keep the endpoint enabled:
  affiliate-webhooks simulate --url http://localhost:3000/hooks --disable-after off

Exit codes: 0 every delivery succeeded, 1 a delivery failed or the endpoint was
disabled, 2 wrong usage, 130 interrupted (the summary so far is printed).`,
})

import { defineCommand, flag, listenOptions } from '../../framework/command.js'

export const emulator = defineCommand({
  usage: [
    `emulator [--port 4010] [--host 127.0.0.1] [--api-key la_...[:scope,scope]]...
                                   [--time-scale N] [--state FILE.json] [--strict] [--catalog FILE.json]`,
    "emulator clock +DURATION      (moves a running emulator's clock: its own help tells how)",
  ],
  about: `Runs the Publisher Affiliate API's webhook side on this machine: GET /v1/health,
/v1/me, /v1/webhooks (register, list, change, delete, rotate-secret, test,
deliveries, replay) with the spec's envelope, errors, keys, scopes and limits,
and the delivery engine (signed attempts, the retry schedule, disable after 20
failures in a row). Emit events and move time with the control routes:
POST /emulator/conversions, POST /emulator/clock {"advanceMs": n}, GET /emulator/log.
The banner's Console line is the web console's address (its token included).`,
  options: {
    ...listenOptions(4010),
    'api-key': {
      type: 'string',
      multiple: true,
      value: 'KEY',
      help: 'la_ + 32 letters or digits, every scope; KEY:scope,scope for a\nkey with only those scopes. Repeatable. Unless one key has\nevery scope, a key is generated and printed.',
    },
    'time-scale': flag.number(
      'N',
      'service time runs N times faster: retry offsets and the\nrate-limit minute are divided by N (default 1)',
      { min: 0 },
    ),
    state: flag.text('FILE', 'keep state in FILE (read at start, written on every change)'),
    strict: flag.bool(
      "the service's URL rules unchanged (public https, port 443);\nby default http and any port are allowed on loopback hosts",
    ),
    catalog: flag.text(
      'FILE',
      'programs and channels to start with, as JSON:\n{"programs": [...], "channels": [...]}; default a small catalogue\n(programs 40 to 47) and channel 7',
    ),
  },
  footer: `Prints one line per delivery attempt: time, endpoint, event, attempt n/8,
result, duration. Exit codes: 0 stopped with Ctrl-C, 1 could not start,
2 wrong usage.`,
})

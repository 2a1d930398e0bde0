import { DEFAULT_MAX_BODY_BYTES } from '@affiliate-webhooks/core/internal'
import { defineCommand, flag, listenOptions } from '../../framework/command.js'

export const listen = defineCommand({
  usage: ['listen --forward-to URL [--port 4242] [--host 127.0.0.1] [--save DIR]'],
  about: `A local relay: point the sender (the emulator, send, simulate, or a tunnel from the
service) at it, and each delivery goes to your app unchanged (headers, exact body
bytes); the app's status and answer go back to the sender. One line per delivery:
time, event id, type, attempt, status, ms. With --save, each delivery is written
to a file first (headers and body, byte-exact), so a failure seen once can be
diagnosed (verify --from FILE) and reproduced (send --from FILE URL).

If the app does not answer, the sender gets 502 forward_failed (or 504 after
10 s), never a 2xx: the service would retry, as it should.`,
  options: {
    'forward-to': flag.text('URL', "your app's webhook URL (required)"),
    ...listenOptions(4242),
    save: flag.text('DIR', 'write each delivery to a file in DIR'),
    'max-body': flag.number(
      'BYTES',
      `larger bodies get 413 and are not forwarded (default ${DEFAULT_MAX_BODY_BYTES})`,
      { min: 1, integer: true },
    ),
    json: flag.bool('one JSON object per delivery instead of a line'),
  },
  footer: `Example:
  affiliate-webhooks listen --forward-to http://localhost:3000/hooks --save captures/

Ctrl-C stops it. Exit codes: 0 stopped, 1 could not listen, 2 wrong usage.`,
})

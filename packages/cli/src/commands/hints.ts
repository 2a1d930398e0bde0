import { routeHint } from '@affiliate-webhooks/emulator'
import type { Io } from './io.js'

/** What failed: the management API (`service`) or the user's app (`app`). */
type Target = 'service' | 'app'

/** The usual cause of an error and what to do, by what the error says; the first match wins. */
const HINTS: readonly [RegExp, string | Record<Target, string>][] = [
  [
    /ECONNREFUSED/,
    {
      service: `nothing listens there: start the emulator ("affiliate-webhooks emulator") or set AFFILIATE_API_URL to where the service runs`,
      app: 'nothing listens there: is your app running, on this host and port?',
    },
  ],
  [
    /\/emulator\/\S+: 404 route_not_found/,
    'that address is not the emulator: trigger and the /emulator routes exist only there ("affiliate-webhooks emulator")',
  ],
  [
    /EADDRINUSE/,
    'another process already listens on that port: stop it, or pick another with --port (0 picks a free one)',
  ],
  [
    /no (complete )?answer within/,
    {
      service:
        'the service did not answer in time: check AFFILIATE_API_URL and the network path to it',
      app: 'your app answered too slowly: the service fails an attempt after 10 s; answer first and do slow work after (the queue option), or check it is not stopped in a debugger',
    },
  ],
  [
    /text\/html|^\s*<(!doctype|html|head|body|pre)/i,
    {
      service:
        "an HTML page answered, not the API: AFFILIATE_API_URL points at a website or proxy (the emulator's banner prints the right export)",
      app: "an HTML page answered, not the webhook route: a proxy or tunnel in front of the app, or the framework's own error page; check the URL",
    },
  ],
]

/** Writes `hint: ...` on stderr when the error text has a usual cause. */
export function writeHint(io: Io, target: Target, text: string): void {
  const said = HINTS.find(([pattern]) => pattern.test(text))?.[1]
  if (said) io.stderr.write(`hint: ${typeof said === 'string' ? said : said[target]}\n`)
}

/** A server that could not listen: the address and why on one line, then the hint for it. */
export function writeCannotListen(
  io: Io,
  command: string,
  address: string,
  error: unknown,
  target: Target,
): void {
  const { code, message } = error as NodeJS.ErrnoException
  io.stderr.write(
    `affiliate-webhooks ${command}: cannot listen on ${address}: ${code ?? message}\n`,
  )
  writeHint(io, target, code ?? message)
}

/** After the app answered 404 or 405 to a POST: `hint:` with the path or method to use. */
export async function writeRouteHint(io: Io, url: string, status: number): Promise<void> {
  io.stderr.write(`hint: ${await routeHint(url, status)}\n`)
}

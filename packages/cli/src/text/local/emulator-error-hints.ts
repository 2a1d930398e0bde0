/**
 * The usual cause of an error and what to do about it, read off the error's
 * text: for the management API (the emulator or the service not reached, not
 * answering, a web page instead of the API) and for the user's app (not
 * listening, too slow, a proxy's page). What the CLI prints after `hint:`.
 */
import { API_URL_ENV } from '@affiliate-webhooks/client/internal'
import { rawBodyFixOf, readReceiverAnswer } from '@affiliate-webhooks/core/internal'

/** What failed: the management API (`service`) or the user's app (`app`). */
export type HintTarget = 'service' | 'app'

/** An answer that is a web page. */
const HTML = /text\/html|^\s*<(!doctype|html|head|body|pre)/i

/** The usual cause of an error and what to do, by what the error says; the first match wins. */
const HINTS: readonly [RegExp, string | Record<HintTarget, string>][] = [
  [
    /ECONNREFUSED/,
    {
      service: `nothing listens there: start the emulator ("affiliate-webhooks emulator") or set ${API_URL_ENV} to where the service runs`,
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
      service: `the service did not answer in time: check ${API_URL_ENV} and the network path to it`,
      app: 'your app answered too slowly: the service fails an attempt after 10 s; answer first and do slow work after (the queue option), or check it is not stopped in a debugger',
    },
  ],
  [
    HTML,
    {
      service: `an HTML page answered, not the API: ${API_URL_ENV} points at a website or proxy (the emulator's banner prints the right export)`,
      app: "an HTML page answered, not the webhook route: a proxy or tunnel in front of the app, or the framework's own error page; check the URL",
    },
  ],
]

/**
 * An HTML 500 from the app itself: the framework's error page for an error
 * thrown in the app (a missing environment variable is the usual one), which a
 * proxy's page would not be (it answers 502, 503 or 504 for an app it cannot reach).
 */
const APP_ERROR_PAGE =
  "your app answered its own HTML error page (500): something in the app threw before or in the webhook route (often a missing AFFILIATE_WEBHOOK_SECRET or database URL); the app's server log, where it runs, names the error. A proxy or tunnel in front of the app answers HTML too, usually 502-504"

/**
 * The hint for an error's text (its message, or the answer's body), and the
 * answer's status where there was one; undefined when none fits.
 */
export function errorHint(target: HintTarget, text: string, status?: number): string | undefined {
  const lost = target === 'app' ? lostBodyHint(text) : undefined
  if (lost !== undefined) return lost
  if (target === 'app' && status === 500 && HTML.test(text)) return APP_ERROR_PAGE
  const said = HINTS.find(([pattern]) => pattern.test(text))?.[1]
  return typeof said === 'string' ? said : said?.[target]
}

/**
 * A receiver's raw_body_unavailable answer: the fix for the stack that answered
 * (the answer names its adapter), not one framework's advice for all.
 */
function lostBodyHint(text: string): string | undefined {
  const at = text.indexOf('{')
  if (at === -1 || !text.includes('raw_body_unavailable')) return undefined
  const { code, adapter } = readReceiverAnswer(text.slice(at))
  if (code !== 'raw_body_unavailable') return undefined
  return (
    rawBodyFixOf(adapter) ??
    'something read the body before the webhook handler: let the webhook read it first, or keep its exact bytes'
  )
}

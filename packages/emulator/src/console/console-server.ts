import { randomBytes } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { AccountState } from '../account/account-state.js'
import type { Route, RouteAnswer } from '../api/routes/route.js'
import type { AttemptLogEntry } from '../delivery/delivery-record.js'
import type { Engine } from '../delivery/engine.js'
import { writeEnvelope } from '../server/http-io.js'
import { ApiError } from '../shared/api-error.js'
import { CONSOLE_HTML, CONSOLE_ICON, CONSOLE_SCRIPT, CONSOLE_STYLES } from './assets.js'
import { authorize, createConsoleApi } from './console-api.js'
import { allowedHosts, hostAllowed } from './hosts.js'
import { LiveEvents } from './live-events.js'

/** Where the console lives; everything under it is the console's. */
export const CONSOLE_PATH = '/console'

// The page (with and without the trailing slash), its script, stylesheet and icon.
const ASSETS = new Map<string, readonly [type: string, body: string]>([
  [CONSOLE_PATH, ['text/html', CONSOLE_HTML]],
  [`${CONSOLE_PATH}/`, ['text/html', CONSOLE_HTML]],
  [`${CONSOLE_PATH}/console.js`, ['text/javascript', CONSOLE_SCRIPT]],
  [`${CONSOLE_PATH}/console.css`, ['text/css', CONSOLE_STYLES]],
  [`${CONSOLE_PATH}/favicon.svg`, ['image/svg+xml', CONSOLE_ICON]],
])

const SECURITY_HEADERS = {
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  // The page's address carries the token: never hand it to another site.
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
}

/** The console of a running emulator, made by {@link createConsole}. */
export interface ConsoleServer {
  /** The token in the console's URL; it stands for the API key on the console's routes. */
  readonly token: string
  /** The console's URL once listening, token included. */
  url(base: string): string
  /** Answers a request under `/console` and returns true; false for any other path. */
  handle(req: IncomingMessage, res: ServerResponse): boolean
  /** The address the emulator listens on: the only `Host` the console answers. */
  listening(address: AddressInfo): void
  /** A change the engine does not see (an application decided): tells open pages. */
  changed(): void
  close(): void
}

function writeAsset(res: ServerResponse, type: string, body: string): void {
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    'Content-Type': `${type}; charset=utf-8`,
    'Content-Length': String(Buffer.byteLength(body)),
  })
  res.end(body)
}

/**
 * Writes a console API answer as the envelope, or its error: an `ApiError` as
 * itself, anything else as 500 `internal_error` (and a process warning).
 */
async function writeConsoleAnswer(
  res: ServerResponse,
  answering: () => RouteAnswer | Promise<RouteAnswer>,
): Promise<void> {
  try {
    const answer = await answering()
    writeEnvelope(res, answer.status, SECURITY_HEADERS, {
      message: answer.message,
      data: answer.data,
      ...(answer.extra ? { extra: answer.extra } : {}),
    })
  } catch (error) {
    const failure =
      error instanceof ApiError
        ? error
        : new ApiError('internal_error', 'The console failed to answer this request.')
    if (!(error instanceof ApiError)) process.emitWarning(`emulator console: ${String(error)}`)
    if (!res.headersSent) {
      writeEnvelope(res, failure.status, SECURITY_HEADERS, {
        message: failure.message,
        error: failure.body(),
      })
    }
  }
}

/**
 * The emulator's web console: one page, its script and stylesheet, its JSON
 * routes under `/console/api` and live events at `/console/events`. It answers
 * only requests whose `Host` is the emulator's own address (a DNS-rebinding page
 * gets 421 and nothing else), and its routes want the URL's token, which a page
 * without it gets for the API key.
 */
export function createConsole(options: {
  engine: Engine
  account: AccountState
  routes: readonly Route[]
  /** After the console changed state (writes the state file). */
  onChange: () => void
  token?: string
}): ConsoleServer {
  const { engine } = options
  const token = options.token ?? randomBytes(24).toString('base64url')
  const live = new LiveEvents(engine)
  const answers = new WeakMap<AttemptLogEntry, string | null>()
  let hosts: Set<string> = new Set()
  engine.watch((event) => {
    if (event.kind === 'attempt') answers.set(event.entry, event.detail.result.responseBody ?? null)
  })
  const api = createConsoleApi({
    ...options,
    token,
    answers,
    onChange: () => {
      options.onChange()
      live.changed()
    },
  })

  const answerApi = (req: IncomingMessage, res: ServerResponse, url: URL) =>
    writeConsoleAnswer(res, () => api(req, url, url.pathname.slice(`${CONSOLE_PATH}/api`.length)))

  const serve = (req: IncomingMessage, res: ServerResponse, url: URL) => {
    const path = url.pathname
    if (path.startsWith(`${CONSOLE_PATH}/api/`)) return void answerApi(req, res, url)
    const asset = ASSETS.get(path)
    if (req.method === 'GET' && asset) return writeAsset(res, asset[0], asset[1])
    if (req.method === 'GET' && path === `${CONSOLE_PATH}/events`) {
      try {
        authorize(req, url.searchParams, token)
      } catch (error) {
        return writeEnvelope(res, 401, SECURITY_HEADERS, {
          message: (error as Error).message,
          error: (error as ApiError).body(),
        })
      }
      return live.open(res)
    }
    writeEnvelope(res, 404, SECURITY_HEADERS, {
      message: `No console page ${req.method} ${path}.`,
      error: { code: 'route_not_found' },
    })
  }

  return {
    token,
    url: (base) => `${base}${CONSOLE_PATH}?token=${token}`,
    listening(address) {
      hosts = allowedHosts(address)
    },
    changed: () => live.changed(),
    close: () => live.close(),
    handle(req, res) {
      const url = new URL(req.url ?? '/', 'http://console')
      if (url.pathname !== CONSOLE_PATH && !url.pathname.startsWith(`${CONSOLE_PATH}/`)) {
        return false
      }
      if (!hostAllowed(req.headers.host, hosts)) {
        // Not even an envelope: a page on another site learns nothing.
        res.writeHead(421, { 'Content-Type': 'text/plain; charset=utf-8', Connection: 'close' })
        res.end(
          'Misdirected request: the console answers only at the address the emulator listens on.\n',
        )
        req.resume()
        return true
      }
      serve(req, res, url)
      return true
    },
  }
}

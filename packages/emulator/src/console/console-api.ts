import { timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { AccountState } from '../account/account-state.js'
import { type ApiKey, requireScope, SCOPES } from '../account/api-keys.js'
import type { Route, RouteAnswer } from '../api/routes/route.js'
import type { AttemptLogEntry } from '../delivery/delivery-record.js'
import type { Engine } from '../delivery/engine.js'
import { parseJson, readRequestBody } from '../server/http-io.js'
import { ApiError } from '../shared/api-error.js'
import { deliveryDetail, deliveryList, overview } from './views.js'

// The emulator's own routes the page may call through /console/api: the
// webhook actions, the catalogue and applications, triggering and the clock.
// Never the key routes (they would show keys) and never creating an endpoint.
const FORWARDED: readonly { method: string; pattern: RegExp }[] = [
  { method: 'PATCH', pattern: /^\/v1\/webhooks\/[^/]+$/ },
  { method: 'POST', pattern: /^\/v1\/webhooks\/[^/]+\/(?:rotate-secret|test)$/ },
  { method: 'POST', pattern: /^\/v1\/webhooks\/[^/]+\/deliveries\/[^/]+\/replay$/ },
  { method: 'GET', pattern: /^\/v1\/programs(?:\/applications)?$/ },
  { method: 'POST', pattern: /^\/emulator\/(?:conversions|clock)$/ },
  { method: 'POST', pattern: /^\/emulator\/applications\/[^/]+\/decision$/ },
]

// What the console does, it does as the account's owner: a key of every scope
// that no request can present (the token, not a key, lets the page in).
const OWNER_KEY: ApiKey = { key: '', scopes: SCOPES, name: 'console' }

const decodeSegment = (segment: string) => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

const sameSecret = (given: string, token: string) => {
  const a = Buffer.from(given)
  const b = Buffer.from(token)
  return a.length === b.length && timingSafeEqual(a, b)
}

/** 401 unless the request carries the token (header for fetches, `?token=` for the event stream). */
export function authorize(req: IncomingMessage, query: URLSearchParams, token: string): void {
  const given = req.headers['x-console-token'] ?? query.get('token') ?? ''
  if (typeof given !== 'string' || !sameSecret(given, token)) {
    throw new ApiError(
      'invalid_api_key',
      'The console token is missing or wrong: open the URL the emulator printed, or sign in with the API key.',
    )
  }
}

/** `POST /console/api/session {apiKey}`: a key with every scope gets the token. */
function openSession(account: AccountState, token: string, req: IncomingMessage, body: unknown) {
  const apiKey = (body as { apiKey?: unknown } | undefined)?.apiKey
  if (typeof apiKey !== 'string' || apiKey.trim() === '') {
    throw new ApiError('invalid_api_key', 'Enter the API key the emulator printed.')
  }
  const key = account.keys.check(apiKey.trim(), req.socket.remoteAddress ?? '', true)
  for (const scope of SCOPES) requireScope(key, scope)
  return { status: 200, message: 'Signed in.', data: { token } }
}

/** One of the {@link FORWARDED} routes, answered by the emulator's own route (one copy of its rules). */
async function forward(
  routes: readonly Route[],
  req: IncomingMessage,
  url: URL,
  path: string,
  raw: Buffer,
) {
  const method = req.method ?? 'GET'
  if (!FORWARDED.some((rule) => rule.method === method && rule.pattern.test(path))) {
    throw new ApiError('route_not_found', `The console does not offer ${method} ${path}.`)
  }
  let params: string[] = []
  const route = routes.find((candidate) => {
    if (candidate.method !== method) return false
    const match = candidate.pattern.exec(path)
    if (match) params = match.slice(1).map(decodeSegment)
    return match !== null
  })
  if (!route) throw new ApiError('route_not_found', `No route ${method} ${path}.`)
  const body = route.body ? parseJson(raw) : undefined
  return route.handle({ params, query: url.searchParams, body, key: OWNER_KEY, req })
}

/**
 * The console's JSON routes under `/console/api`: `session`, `overview`,
 * `deliveries`, `deliveries/{id}`, and the forwarded routes. Everything but
 * `session` wants the token.
 */
export function createConsoleApi(options: {
  engine: Engine
  account: AccountState
  routes: readonly Route[]
  token: string
  /** Each attempt's first 500 characters of answer. */
  answers: WeakMap<AttemptLogEntry, string | null>
  /** After a forwarded request that may have changed state. */
  onChange: () => void
}) {
  const { engine, token } = options
  const ok = (data: unknown): RouteAnswer => ({ status: 200, message: 'OK', data })
  return async function answer(req: IncomingMessage, url: URL, path: string): Promise<RouteAnswer> {
    const raw = await readRequestBody(req)
    if (req.method === 'POST' && path === '/session') {
      return openSession(options.account, token, req, parseJson(raw))
    }
    authorize(req, url.searchParams, token)
    if (req.method === 'GET' && path === '/overview') return ok(overview(engine))
    if (req.method === 'GET' && path === '/deliveries') {
      return ok(deliveryList(engine, url.searchParams))
    }
    const one = /^\/deliveries\/([^/]+)$/.exec(path)
    if (req.method === 'GET' && one) {
      const id = decodeSegment(one[1] ?? '')
      const delivery = engine.deliveries().find((candidate) => candidate.id === id)
      if (!delivery) throw new ApiError('delivery_not_found', `No delivery ${id}.`)
      return ok(deliveryDetail(engine, delivery, options.answers))
    }
    const answered = await forward(options.routes, req, url, path, raw)
    if (req.method !== 'GET') options.onChange()
    return answered
  }
}

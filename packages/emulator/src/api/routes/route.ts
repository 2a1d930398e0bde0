import type { IncomingMessage, ServerResponse } from 'node:http'
import type { ApiKey, Scope } from '../../account/api-keys.js'
import { ApiError } from '../../shared/api-error.js'

/** What a route hands back: status, message, data and any top-level extras. */
export interface RouteAnswer {
  status: number
  message: string
  data: unknown
  extra?: Record<string, unknown>
  /**
   * A long-lived answer (the event stream of `GET /emulator/webhooks/{id}/events`):
   * it writes its own status and headers on `res` instead of the envelope.
   */
  stream?: (res: ServerResponse) => void
}

/** What a route gets. */
export interface RouteContext {
  params: readonly string[]
  query: URLSearchParams
  /** The JSON body, undefined when empty; only for routes that take one. */
  body: unknown
  key: ApiKey
  req: IncomingMessage
}

/** One route of the emulator. */
export interface Route {
  method: string
  pattern: RegExp
  /** `public`: no key (health). `key`: any valid key. Otherwise the scope needed. */
  access: 'public' | 'key' | Scope
  /** Control routes are not the service: not rate limited, not counted. */
  control?: boolean
  /** Keeps working once the monthly quota is used up (GET /v1/me). */
  quotaExempt?: boolean
  /** Parses the body as JSON (malformed_json when it is not). */
  body?: boolean
  handle(context: RouteContext): RouteAnswer | Promise<RouteAnswer>
}

/** A success answer: the data, the envelope's message, 200 unless told. */
export const ok = (data: unknown, message = 'OK', status = 200): RouteAnswer => ({
  status,
  message,
  data,
})

/** A path pattern, each `{id}` one segment captured. */
export const path = (pattern: string): RegExp =>
  new RegExp(`^${pattern.replaceAll('{id}', '([^/]+)')}$`)

/** Epoch ms as the API shows a time (ISO), null kept. */
export const iso = (ms: number | null): string | null =>
  ms === null ? null : new Date(ms).toISOString()

/** A path id that is a whole number, or the 404 `code` (a malformed id names nothing). */
export function numericId(
  value: string | undefined,
  code: 'program_not_found' | 'application_not_found',
): number {
  if (value !== undefined && /^\d{1,15}$/.test(value)) return Number(value)
  throw new ApiError(
    code,
    `No ${code === 'program_not_found' ? 'program' : 'application'} ${value}.`,
  )
}

import type { IncomingMessage, ServerResponse } from 'node:http'
import { type ApiKey, presentedKey, requireScope } from '../account/api-keys.js'
import type { KeyRegistry } from '../account/key-registry.js'
import { answerDate, type RateLimiter } from '../account/rate-limit.js'
import type { Route } from '../api/routes/route.js'
import { ApiError, isApiError } from '../shared/api-error.js'
import type { Clock } from '../shared/clock.js'
import { parseJson, readRequestBody, writeEnvelope } from './http-io.js'

/** A path segment decoded; one with a broken escape stays as sent (and matches no id). */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

/**
 * Answers one request, in the order the spec implies: the key (401, and 403
 * `ip_not_allowed`), the limits (429, and the headers every request that passes
 * the key carries), the body size (413), the route (404), the scope (403), the
 * JSON (400), then the route itself.
 */
export function createRequestHandler(options: {
  routes: readonly Route[]
  keys: KeyRegistry
  limiter: RateLimiter
  clock: Clock
  /** After a request that may have changed state (any method but GET) was answered 2xx. */
  onChange?: () => void
}) {
  return async function handle(req: IncomingMessage, res: ServerResponse) {
    // Answers are dated on the emulator's clock, like X-RateLimit-Reset.
    let headers: Record<string, string> = {}
    const dated = () => ({
      ...headers,
      Date: answerDate(options.clock.now(), options.clock.timeScale),
    })
    try {
      const read = await readRequestBody(req).then(
        (raw) => ({ raw, tooLarge: undefined }),
        (error: unknown) => {
          if (!isApiError(error)) throw error
          return { raw: Buffer.alloc(0), tooLarge: error }
        },
      )
      const url = new URL(req.url ?? '/', 'http://emulator')
      let params: string[] = []
      const route = options.routes.find((candidate) => {
        if (candidate.method !== req.method) return false
        const match = candidate.pattern.exec(url.pathname)
        if (match) params = match.slice(1).map(decodeSegment)
        return match !== null
      })
      const notFound = () =>
        new ApiError('route_not_found', `No route ${req.method} ${url.pathname}.`)
      let key: ApiKey = { key: '', scopes: [] }
      if (route?.access !== 'public') {
        // The key comes first: a request that passes it carries the limit headers
        // and counts, whatever it asks for (an unknown route, a body over 1 MB).
        try {
          key = options.keys.check(
            presentedKey(req.headers.authorization),
            req.socket.remoteAddress ?? '',
            route?.control === true,
          )
        } catch (error) {
          // Without a valid key a request belongs to no account: answered as it is.
          throw read.tooLarge ?? (route ? error : notFound())
        }
        if (!route?.control) headers = options.limiter.check(route?.quotaExempt === true)
      }
      if (read.tooLarge) throw read.tooLarge
      if (!route) throw notFound()
      if (route.access !== 'key' && route.access !== 'public') requireScope(key, route.access)
      const body = route.body ? parseJson(read.raw) : undefined
      const answer = await route.handle({ params, query: url.searchParams, body, key, req })
      if (answer.stream) return answer.stream(res)
      writeEnvelope(res, answer.status, dated(), {
        message: answer.message,
        data: answer.data,
        ...(answer.extra ? { extra: answer.extra } : {}),
      })
      if (req.method !== 'GET') options.onChange?.()
    } catch (error) {
      const failure =
        error instanceof ApiError
          ? error
          : new ApiError('internal_error', 'The emulator failed to answer this request.')
      if (failure.status === 429) headers = { ...failure.headers }
      if (failure.status === 401 || failure.code === 'ip_not_allowed') headers = {}
      if (!res.headersSent) {
        writeEnvelope(res, failure.status, dated(), {
          message: failure.message,
          error: failure.body(),
        })
      }
      if (!(error instanceof ApiError)) process.emitWarning(`emulator: ${String(error)}`)
    }
  }
}

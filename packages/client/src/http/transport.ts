import { delay } from './delay.js'
import { DuplicateApplicationError } from './duplicate-application-error.js'
import {
  type FieldError,
  ServiceError,
  type ServiceErrorCode,
  type ServiceErrorDetails,
} from './errors.js'
import { Pacer } from './pacer.js'

/** How a call may be repeated after a 5xx or a lost answer. */
export type RetryPolicy =
  /** Safe to repeat (reads, PATCH, DELETE, rotate): back off and try again. */
  | 'repeat'
  /** Not safe to repeat blindly: the caller decides (create, test event). */
  | 'once'

/** Retry settings; the defaults suit a person at a terminal and a script alike. */
export interface RetryOptions {
  /** Further tries after a 5xx or a network error, for calls safe to repeat. Default 3. */
  retries?: number
  /** First back-off; doubles each try, with full jitter. Default 500 ms. */
  baseDelayMs?: number
  /** Longest back-off. Default 8 s. */
  maxDelayMs?: number
  /** Most 429 `rate_limited` answers waited out for one call. Default 10. */
  rateLimitRetries?: number
}

/** One call: method, path under `/v1`, query and JSON body. */
export interface CallSpec {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE'
  /** Under the base URL, e.g. `/v1/webhooks`. */
  path: string
  query?: Record<string, string | number | undefined>
  body?: unknown
  auth?: boolean
  signal?: AbortSignal | undefined
  /** Longest wait for this answer, when not the client's (a clock move that runs attempts). */
  timeoutMs?: number | undefined
}

/** A successful answer: status, headers and the envelope's `data`. */
export interface Answer<T> {
  status: number
  headers: Headers
  data: T
  message: string | undefined
  /** The envelope's other top-level fields (a list's paging fields). */
  extra: Record<string, unknown>
}

export interface TransportOptions {
  baseUrl: string
  apiKey: string
  fetch: typeof fetch
  timeoutMs: number
  retry: Required<RetryOptions>
  now: () => number
  random: () => number
}

/** True for an error after which the service may or may not have acted. */
export function isAmbiguous(error: unknown): boolean {
  return error instanceof ServiceError && (error.status >= 500 || error.code === 'network_error')
}

/**
 * Sends calls to the service: authentication, pacing under the rate limit,
 * 429 waited out, 5xx and network errors retried for calls safe to repeat, and
 * every failure turned into one {@link ServiceError} with the key redacted.
 */
export class Transport {
  readonly pacer: Pacer
  readonly #options: TransportOptions
  readonly #keyTail: string

  constructor(options: TransportOptions) {
    this.#options = options
    this.pacer = new Pacer(options.now)
    this.#keyTail = `la_…${options.apiKey.slice(-4)}`
  }

  /** The retry settings in force. */
  get retry(): Required<RetryOptions> {
    return this.#options.retry
  }

  /** Sends a call, repeating it after 5xx or a lost answer only when `policy` is `repeat`. */
  async call<T>(spec: CallSpec, policy: RetryPolicy): Promise<Answer<T>> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.send<T>(spec)
      } catch (error) {
        if (policy === 'once' || !isAmbiguous(error) || attempt >= this.#options.retry.retries) {
          throw error
        }
        await this.backoff(attempt, spec.signal)
      }
    }
  }

  /**
   * For a write whose repeat fails in a known way once the first try worked
   * (DELETE then `webhook_not_found`, replay then `delivery_not_replayable`):
   * repeats after a lost answer, and resolves null when a repeat meets `settled`.
   */
  async callSettled<T>(spec: CallSpec, settled: ServiceErrorCode): Promise<Answer<T> | null> {
    let ambiguous = false
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.send<T>(spec)
      } catch (error) {
        if (ambiguous && error instanceof ServiceError && error.code === settled) return null
        if (!isAmbiguous(error) || attempt >= this.#options.retry.retries) throw error
        ambiguous = true
        await this.backoff(attempt, spec.signal)
      }
    }
  }

  /** Exponential back-off with full jitter before try `attempt + 1`. */
  backoff(attempt: number, signal?: AbortSignal): Promise<void> {
    const { baseDelayMs, maxDelayMs } = this.#options.retry
    return delay(this.#options.random() * Math.min(maxDelayMs, baseDelayMs * 2 ** attempt), signal)
  }

  /** One call, with 429 `rate_limited` waited out (the service did nothing then). */
  async send<T>(spec: CallSpec): Promise<Answer<T>> {
    for (let limited = 0; ; limited++) {
      try {
        return await this.#once<T>(spec)
      } catch (error) {
        if (
          !(error instanceof ServiceError) ||
          error.code !== 'rate_limited' ||
          limited >= this.#options.retry.rateLimitRetries
        ) {
          throw error
        }
        // #once told the pacer to hold every call until Retry-After has passed.
      }
    }
  }

  /**
   * Opens a long-lived `text/event-stream` answer (the emulator's event
   * stream): the key sent, no pacing (such a route is not counted), the time
   * limit only until the headers come. A refusal is thrown as the
   * {@link ServiceError} any call gets; so is an answer that is no event stream.
   */
  async openStream(spec: {
    path: string
    signal?: AbortSignal | undefined
    lastEventId?: string | undefined
    /** A stream with no bytes for this long is dead (the emulator writes a keepalive every 15 s). */
    idleMs?: number | undefined
  }): Promise<AsyncIterable<Uint8Array>> {
    const { baseUrl, apiKey, timeoutMs } = this.#options
    const url = new URL(baseUrl + spec.path)
    const headers: Record<string, string> = {
      accept: 'text/event-stream',
      authorization: `Bearer ${apiKey}`,
      ...(spec.lastEventId !== undefined ? { 'last-event-id': spec.lastEventId } : {}),
    }
    const connecting = new AbortController()
    const timer = setTimeout(() => connecting.abort(), timeoutMs)
    const signal = spec.signal
      ? AbortSignal.any([spec.signal, connecting.signal])
      : connecting.signal
    let response: Response
    try {
      response = await this.#options.fetch(url, { headers, signal, redirect: 'manual' })
    } catch (error) {
      if (spec.signal?.aborted) throw spec.signal.reason
      const why = connecting.signal.aborted
        ? `no answer within ${timeoutMs} ms`
        : this.#redact(describeNetworkError(error))
      throw new ServiceError(
        0,
        'network_error',
        `GET ${url.host}${spec.path}: ${why}`,
        {},
        {
          cause: error,
        },
      )
    } finally {
      clearTimeout(timer)
    }
    const type = response.headers.get('content-type') ?? 'no content type'
    if (response.ok && type.startsWith('text/event-stream') && response.body)
      return whileAlive(response.body, connecting, spec.idleMs ?? STREAM_IDLE_MS)
    // An error envelope is thrown as itself; anything else is not the stream asked for.
    this.#read({ method: 'GET', path: spec.path }, url, response, await response.text())
    throw new ServiceError(
      response.status,
      'invalid_response',
      `GET ${url.host}${spec.path}: answered ${response.status} with ${type}, not an event stream`,
    )
  }

  async #once<T>(spec: CallSpec): Promise<Answer<T>> {
    const { baseUrl, apiKey } = this.#options
    const timeoutMs = spec.timeoutMs ?? this.#options.timeoutMs
    const url = new URL(baseUrl + spec.path)
    for (const [name, value] of Object.entries(spec.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value))
    }
    const headers: Record<string, string> = { accept: 'application/json' }
    if (spec.auth !== false) headers.authorization = `Bearer ${apiKey}`
    if (spec.body !== undefined) headers['content-type'] = 'application/json'
    // The health check is neither rate limited nor counted.
    const paced = spec.auth !== false
    if (paced) await this.pacer.acquire(spec.signal)
    // The time limit starts once the call may go out: a wait for the rate-limit
    // window is not a service that fails to answer.
    const timeout = AbortSignal.timeout(timeoutMs)
    const signal = spec.signal ? AbortSignal.any([spec.signal, timeout]) : timeout
    let response: Response | undefined
    let text: string
    try {
      response = await this.#options.fetch(url, {
        method: spec.method,
        headers,
        ...(spec.body !== undefined ? { body: JSON.stringify(spec.body) } : {}),
        signal,
        redirect: 'manual',
      })
      text = await response.text()
    } catch (error) {
      if (spec.signal?.aborted) throw spec.signal.reason
      const why = timeout.aborted
        ? `no answer within ${timeoutMs} ms`
        : this.#redact(describeNetworkError(error))
      throw new ServiceError(
        0,
        'network_error',
        `${spec.method} ${url.host}${spec.path}: ${why}`,
        {},
        { cause: error },
      )
    } finally {
      if (paced) this.pacer.release(response?.headers)
    }
    return this.#read<T>(spec, url, response, text)
  }

  #read<T>(spec: CallSpec, url: URL, response: Response, text: string): Answer<T> {
    const where = `${spec.method} ${url.host}${spec.path}`
    let envelope: unknown
    try {
      envelope = text === '' ? undefined : JSON.parse(text)
    } catch {
      envelope = undefined
    }
    if (!isEnvelope(envelope)) {
      const type = response.headers.get('content-type') ?? 'no content type'
      throw new ServiceError(
        response.status,
        'invalid_response',
        `${where}: answered ${response.status} with ${text === '' ? 'an empty body' : type}, not the API's JSON envelope; is the base URL the service's?`,
      )
    }
    const message =
      typeof envelope.message === 'string' ? this.#redact(envelope.message) : undefined
    if (envelope.success === true && response.status < 300) {
      const { success: _success, message: _message, data, ...extra } = envelope
      return { status: response.status, headers: response.headers, data: data as T, message, extra }
    }
    throw this.#error(where, response, envelope.error, message)
  }

  #error(where: string, response: Response, error: unknown, message: string | undefined) {
    const details: ServiceErrorDetails = {}
    const retryAfter = Number(response.headers.get('retry-after'))
    if (response.headers.has('retry-after') && Number.isFinite(retryAfter)) {
      details.retryAfter = retryAfter
    }
    if (Array.isArray(error)) {
      details.fields = error.filter(isFieldError)
      // Each field with the service's own words on it: what was wrong, not only where.
      const list = details.fields
        .map((f) => `${f.field} ${f.code}${f.message ? ` (${this.#redact(f.message)})` : ''}`)
        .join(', ')
      return new ServiceError(
        response.status,
        'validation_failed',
        `${where}: ${response.status} validation failed: ${list || (message ?? 'no fields named')}`,
        details,
      )
    }
    const fields = (typeof error === 'object' && error !== null ? error : {}) as Record<
      string,
      unknown
    >
    const code = typeof fields.code === 'string' ? fields.code : `http_${response.status}`
    const extra: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(fields)) {
      if (key === 'code' || key === 'message') continue
      if (key === 'required' && typeof value === 'string') details.required = value
      else if (key === 'granted' && Array.isArray(value)) details.granted = value.map(String)
      else if (key === 'ip' && typeof value === 'string') details.ip = value
      else if (key === 'rotatedAt' && typeof value === 'string') details.rotatedAt = value
      else extra[key] = value
    }
    if (Object.keys(extra).length > 0) details.extra = extra
    if (code === 'rate_limited') this.pacer.block((details.retryAfter ?? 1) * 1000)
    const said = message ?? (typeof fields.message === 'string' ? this.#redact(fields.message) : '')
    const text = `${where}: ${response.status} ${code}${said ? `: ${said}` : ''}${explain(code, details)}`
    if (code === 'duplicate_application') {
      return new DuplicateApplicationError(response.status, text, details)
    }
    return new ServiceError(response.status, code, text, details)
  }

  /** The key never leaves in a message: at most its last four characters. */
  #redact(text: string): string {
    return text.split(this.#options.apiKey).join(this.#keyTail)
  }
}

function explain(code: string, details: ServiceErrorDetails): string {
  switch (code) {
    case 'insufficient_scope':
      return ` (needs ${details.required ?? '?'}; the key has ${details.granted?.join(', ') || 'none'})`
    case 'quota_exceeded':
      return ` (the monthly quota is used up; it resets on the 1st, UTC${details.retryAfter !== undefined ? `, in ${Math.ceil(details.retryAfter / 3600)} h` : ''}: not waited out)`
    case 'ip_not_allowed':
      return details.ip ? ` (the service saw ${details.ip})` : ''
    default:
      return ''
  }
}

function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause
  if (cause?.code) return `${cause.code}${cause.message ? ` (${cause.message})` : ''}`
  if (cause?.message) return cause.message
  return error instanceof Error ? error.message : String(error)
}

interface Envelope {
  success: boolean
  message?: unknown
  data?: unknown
  error?: unknown
}

function isEnvelope(value: unknown): value is Envelope {
  return (
    typeof value === 'object' && value !== null && typeof (value as Envelope).success === 'boolean'
  )
}

function isFieldError(value: unknown): value is FieldError {
  const entry = value as FieldError
  return typeof entry === 'object' && entry !== null && typeof entry.field === 'string'
}

/** Three of the emulator's 15 s keepalives missed: the connection died without closing. */
export const STREAM_IDLE_MS = 45_000

/**
 * The stream's chunks, until `idleMs` pass without one: then the request is
 * aborted, so reading it fails as a broken connection does (and is opened again).
 */
async function* whileAlive(
  body: AsyncIterable<Uint8Array>,
  request: AbortController,
  idleMs: number,
): AsyncGenerator<Uint8Array> {
  const idle = setTimeout(() => {
    request.abort(new Error(`no bytes for ${idleMs} ms`))
  }, idleMs)
  try {
    for await (const chunk of body) {
      idle.refresh()
      yield chunk
    }
  } finally {
    clearTimeout(idle)
  }
}

import { type RetryOptions, Transport } from './http/transport.js'
import { ApplicationsResource } from './resources/applications.js'
import { EmulatorControls } from './resources/emulator-controls.js'
import { ProgramsResource } from './resources/programs.js'
import { type CallOptions, WebhooksResource } from './resources/webhooks.js'
import type { KeyInfo, QuotaState, RateLimitState } from './types.js'

/** The environment variable that holds the API key, by convention (the CLI reads it). */
export const API_KEY_ENV = 'AFFILIATE_API_KEY'
/** The environment variable that holds the service's address, by convention (the CLI reads it). */
export const API_URL_ENV = 'AFFILIATE_API_URL'

/** Options of {@link createClient}. */
export interface ClientOptions {
  /** `la_` followed by 32 characters. `process.env.AFFILIATE_API_KEY` type-checks as it is. */
  apiKey: string | undefined
  /** The service's address, without `/v1` (added here); the spec names no host. */
  baseUrl: string | undefined
  /** Retry settings for 429, 5xx and network errors. */
  retry?: RetryOptions
  /** Longest wait for one answer. Default 30 s. */
  timeoutMs?: number
  /** Another `fetch` (a proxy agent, a test double). Default the global one. */
  fetch?: typeof fetch
}

/** The client {@link createClient} returns. */
export interface Client {
  webhooks: WebhooksResource
  /** The catalogue: `list(filters)` walks every page, `get(id, { channelId })`. */
  programs: ProgramsResource
  /** `create({ programId, channelId, note })`, `list(filters)`. */
  applications: ApplicationsResource
  /** The local emulator's control routes (`emitConversion`); the real service has none. */
  emulator: EmulatorControls
  /** `GET /v1/me`: the calling key's details, including `callerIp`. */
  me(options?: CallOptions): Promise<KeyInfo>
  /** `GET /v1/health`: resolves when the API is up. Needs no key and costs no quota. */
  health(options?: CallOptions): Promise<unknown>
  /** The rate-limit window as the last answer reported it. */
  readonly rateLimit: RateLimitState | undefined
  /** The monthly quota as the last answer that carried it reported it. */
  readonly quota: QuotaState | undefined
  /** Real ms until the rate-limit window clears, by the last answer (0 when unknown or past). */
  msUntilRateLimitReset(): number
}

const KEY = /^la_[\x21-\x7e]{32}$/

/**
 * A typed client of the service's API (webhooks, programs, applications), on `fetch` alone (Node 22.18+, Bun,
 * Deno, Workers). Waits out 429s and paces itself under the rate limit; repeats
 * after 5xx or a lost answer only what is safe to repeat (see each method).
 */
export function createClient(options: ClientOptions): Client {
  const apiKey = checkKey(options.apiKey)
  const baseUrl = checkBaseUrl(options.baseUrl)
  const fetcher = options.fetch ?? globalThis.fetch
  if (typeof fetcher !== 'function')
    throw new TypeError('affiliate-webhooks client: no fetch available; pass options.fetch')
  const transport = new Transport({
    apiKey,
    baseUrl,
    fetch: fetcher,
    timeoutMs: options.timeoutMs ?? 30_000,
    retry: {
      retries: options.retry?.retries ?? 3,
      baseDelayMs: options.retry?.baseDelayMs ?? 500,
      maxDelayMs: options.retry?.maxDelayMs ?? 8_000,
      rateLimitRetries: options.retry?.rateLimitRetries ?? 10,
    },
    now: () => performance.now(),
    random: Math.random,
  })
  return {
    webhooks: new WebhooksResource(transport),
    programs: new ProgramsResource(transport),
    applications: new ApplicationsResource(transport),
    emulator: new EmulatorControls(transport),
    async me(call = {}) {
      return (
        await transport.call<KeyInfo>(
          { method: 'GET', path: '/v1/me', signal: call.signal },
          'repeat',
        )
      ).data
    },
    async health(call = {}) {
      return (
        await transport.call<unknown>(
          { method: 'GET', path: '/v1/health', auth: false, signal: call.signal },
          'repeat',
        )
      ).data
    },
    get rateLimit() {
      return transport.pacer.state
    },
    get quota() {
      return transport.pacer.quota
    },
    msUntilRateLimitReset: () => transport.pacer.msUntilReset(),
  }
}

function checkKey(apiKey: unknown): string {
  if (typeof apiKey !== 'string' || apiKey === '') {
    throw new TypeError(
      `affiliate-webhooks client: apiKey is missing; set ${API_KEY_ENV} to a key from the publisher dashboard (la_ followed by 32 characters)`,
    )
  }
  if (!KEY.test(apiKey)) {
    // Say what is wrong without repeating any of the key.
    const why = !apiKey.startsWith('la_')
      ? 'it does not start with la_'
      : apiKey.trim() !== apiKey
        ? 'it has white space around it'
        : `it has ${apiKey.length - 3} characters after la_, not 32`
    throw new TypeError(`affiliate-webhooks client: apiKey is not an API key (${why})`)
  }
  return apiKey
}

function checkBaseUrl(baseUrl: unknown): string {
  if (typeof baseUrl !== 'string' || baseUrl === '') {
    throw new TypeError(
      `affiliate-webhooks client: baseUrl is missing; set ${API_URL_ENV} to the service address (the spec names no default host)`,
    )
  }
  let url: URL
  try {
    url = new URL(baseUrl)
  } catch {
    throw new TypeError(
      `affiliate-webhooks client: baseUrl ${JSON.stringify(baseUrl)} is not a URL`,
    )
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new TypeError(`affiliate-webhooks client: baseUrl must be http(s), not ${url.protocol}`)
  }
  // The /v1 prefix is the client's business: accept the address with or without it.
  return url.href.replace(/\/+$/, '').replace(/\/v1$/, '')
}

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { ApiError } from './api-error.js'
import { type Clock, createClock } from './clock.js'
import { type AttemptLogEntry, createEngine, type Engine } from './engine.js'
import { parseJson, readBody, writeEnvelope } from './http-io.js'
import { newId } from './ids.js'
import { type ApiKey, authenticate, parseApiKey, requireScope, SCOPES } from './keys.js'
import { createRateLimiter } from './rate-limit.js'
import { createRoutes, type Route } from './routes.js'
import { readStateFile, type StateFile, writeStateFile } from './state-file.js'

/** A path segment decoded; one with a broken escape stays as sent (and matches no id). */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

/** Answers one request: size limit, route, key, rate limit, scope, then the route. */
function createHandler(
  routes: readonly Route[],
  keyMap: ReadonlyMap<string, ApiKey>,
  limiter: ReturnType<typeof createRateLimiter>,
) {
  return async function handle(req: IncomingMessage, res: ServerResponse) {
    let headers: Record<string, string> = {}
    try {
      // The size limit comes first, as at the service's edge.
      const raw = await readBody(req)
      const url = new URL(req.url ?? '/', 'http://emulator')
      let params: string[] = []
      const route = routes.find((candidate) => {
        if (candidate.method !== req.method) return false
        const match = candidate.pattern.exec(url.pathname)
        if (match) params = match.slice(1).map(decodeSegment)
        return match !== null
      })
      if (!route) {
        throw new ApiError('route_not_found', `No route ${req.method} ${url.pathname}.`)
      }
      let key: ApiKey = { key: '', scopes: [] }
      if (route.access !== 'public') {
        key = authenticate(req.headers.authorization, keyMap)
        if (!route.control) headers = limiter.check(route.quotaExempt === true)
        if (route.access !== 'key') requireScope(key, route.access)
      }
      const body = route.body ? parseJson(raw) : undefined
      const answer = await route.handle({ params, query: url.searchParams, body, key, req })
      writeEnvelope(res, answer.status, headers, {
        message: answer.message,
        data: answer.data,
        ...(answer.extra ? { extra: answer.extra } : {}),
      })
    } catch (error) {
      const failure =
        error instanceof ApiError
          ? error
          : new ApiError('internal_error', 'The emulator failed to answer this request.')
      if (failure.status === 429) headers = { ...failure.headers }
      if (failure.status === 401) headers = {}
      if (!res.headersSent) {
        writeEnvelope(res, failure.status, headers, {
          message: failure.message,
          error: failure.body(),
        })
      }
      if (!(error instanceof ApiError)) process.emitWarning(`emulator: ${String(error)}`)
    }
  }
}

/** Options of {@link createEmulator}. */
export interface EmulatorOptions {
  /**
   * Keys the emulator accepts: `la_` + 32 characters for every scope, or
   * `KEY:scope,scope`, or `{ key, scopes }`. Unless one of them has every scope,
   * a key with every scope is generated too (kept in the state file when there
   * is one) and comes first.
   */
  apiKeys?: readonly (string | ApiKey)[]
  /** Service time runs this many times faster than real time (retry offsets and the rate-limit minute shrink). Default 1. */
  timeScale?: number
  /** Apply the service's URL rules unchanged: no http or loopback URLs. Default false. */
  strict?: boolean
  /** Read at start and written on every change (temp file + rename). Default: memory only. */
  statePath?: string
  /** Service time; default a clock at `timeScale` starting now (or where the state file left it). */
  clock?: Clock
  /** Real ms a receiver has to answer. Default 10 000, the spec's limit. */
  attemptTimeoutMs?: number
  /** Attempts in flight at once while the clock runs on its own. Default 50. */
  concurrency?: number
  /** Requests per minute. Default 120. */
  rateLimit?: number
  /** Calls per month. Default 250 000. */
  monthlyQuota?: number
  /** Deliveries go out in batches this often, service ms; 0 sends each when due. Default one minute, as the service. */
  batchIntervalMs?: number
  /** After every attempt (the CLI prints a line). */
  onAttempt?: (entry: AttemptLogEntry) => void
}

/** A running emulator, made by {@link createEmulator}. */
export interface Emulator {
  /** Starts listening; resolves to the base URL (`http://host:port`). */
  listen(port?: number, host?: string): Promise<string>
  /** The base URL once listening. */
  readonly url: string
  /** The node:http server. */
  readonly server: Server
  /** The keys it accepts; the first is the one to print. */
  readonly apiKeys: readonly ApiKey[]
  /** True when the first key was generated (no key with every scope was passed). */
  readonly generatedKey: boolean
  /** Service time. */
  readonly clock: Clock
  /** The delivery engine, for tests that look inside. */
  readonly engine: Engine
  /** True when http URLs on loopback hosts are allowed. */
  readonly allowLoopback: boolean
  /** Stops listening and sending; writes the state file a last time. */
  close(): Promise<void>
}

/**
 * The service's webhook side on this machine: the `/v1` webhook API with keys,
 * scopes, rate limit and quota; the delivery engine (signing, retry schedule,
 * disable after 20 failures, replay); control routes to emit conversions,
 * advance the clock and read the attempt log.
 */
export function createEmulator(options: EmulatorOptions = {}): Emulator {
  const { statePath } = options
  const saved: StateFile | undefined = statePath ? readStateFile(statePath) : undefined
  const keys: ApiKey[] = (options.apiKeys ?? []).map((key) =>
    typeof key === 'string' ? parseApiKey(key) : key,
  )
  // Keys with only some scopes are for trying scope errors: a key with every scope
  // is still needed to set things up, so one is generated unless given.
  const generatedKey = !keys.some((key) => SCOPES.every((scope) => key.scopes.includes(scope)))
  if (generatedKey) keys.unshift({ key: saved?.generatedKey ?? newId.apiKey(), scopes: SCOPES })
  const keyMap = new Map(keys.map((key) => [key.key, key]))
  const timeScale = options.clock?.timeScale ?? options.timeScale ?? 1
  const clock =
    options.clock ??
    createClock({ timeScale, start: Math.max(Date.now(), saved?.now ?? Number.NEGATIVE_INFINITY) })
  const allowLoopback = !options.strict

  let engine: Engine | undefined
  const persist = () => {
    if (!statePath || !engine) return
    writeStateFile(statePath, {
      version: 1,
      ...engine.snapshot(),
      ...(generatedKey ? { generatedKey: (keys[0] as ApiKey).key } : {}),
    })
  }
  engine = createEngine({
    clock,
    ...(options.attemptTimeoutMs === undefined ? {} : { timeoutMs: options.attemptTimeoutMs }),
    ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
    ...(options.batchIntervalMs === undefined ? {} : { batchIntervalMs: options.batchIntervalMs }),
    ...(options.onAttempt ? { onAttempt: options.onAttempt } : {}),
    onChange: persist,
    // Only writing the state file can throw here; the emulator carries on.
    onError: (error) => process.emitWarning(`emulator: ${String(error)}`),
    ...(saved ? { initial: saved } : {}),
  })
  const theEngine = engine
  persist()

  const limiter = createRateLimiter({
    now: clock.now,
    timeScale: clock.timeScale,
    ...(options.rateLimit === undefined ? {} : { limit: options.rateLimit }),
    ...(options.monthlyQuota === undefined ? {} : { quota: options.monthlyQuota }),
  })
  const routes = createRoutes(theEngine, { allowLoopback })

  const handle = createHandler(routes, keyMap, limiter)
  const server = createServer((req, res) => {
    void handle(req, res)
  })
  let url = ''

  return {
    server,
    get url() {
      return url
    },
    apiKeys: keys,
    generatedKey,
    clock,
    engine: theEngine,
    allowLoopback,
    async listen(port = 4010, host = '127.0.0.1') {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject)
        server.listen(port, host, () => {
          server.off('error', reject)
          resolve()
        })
      })
      const address = server.address() as AddressInfo
      const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address
      url = `http://${shown}:${address.port}`
      return url
    },
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
      await theEngine.close()
      persist()
    },
  }
}

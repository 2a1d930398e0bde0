import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type AccountState, createAccountState } from '../account/account-state.js'
import { type ApiKey, parseApiKey, SCOPES } from '../account/api-keys.js'
import { readCatalogueFile } from '../account/catalogue-file.js'
import { type CatalogueSeed, DEFAULT_CATALOGUE } from '../account/default-catalogue.js'
import { createRateLimiter } from '../account/rate-limit.js'
import type { Route } from '../api/routes/route.js'
import { createRoutes } from '../api/routes/route-table.js'
import type { EndpointStatusChange } from '../api/routes/webhooks.js'
import { type ConsoleServer, createConsole } from '../console/console-server.js'
import type { AttemptDetail } from '../delivery/attempt-delivery.js'
import { type AttemptLogEntry, createEngine, type Engine } from '../delivery/engine.js'
import { type Clock, createClock } from '../shared/clock.js'
import { newId } from '../shared/ids.js'
import { createRequestHandler } from './request-handler.js'
import { readStateFile, type StateFile, writeStateFile } from './state-file.js'

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
  /** After every attempt (the CLI prints a line); `detail.disabledEndpoint` when it disabled the endpoint. */
  onAttempt?: (entry: AttemptLogEntry, detail: AttemptDetail) => void
  /** When a PATCH disables or enables an endpoint (a disable by the failure streak comes through `onAttempt`). */
  onEndpointStatus?: (change: EndpointStatusChange) => void
  /** A catalogue file (`--catalog FILE`) to start with instead of the default programs and channel. */
  catalogPath?: string
  /** A catalogue to start with, as the file would hold it. Default a small realistic one. */
  catalogue?: CatalogueSeed
}

/** A running emulator, made by {@link createEmulator}. */
export interface Emulator {
  /** Starts listening; resolves to the base URL (`http://host:port`). */
  listen(port?: number, host?: string): Promise<string>
  /** The base URL once listening. */
  readonly url: string
  /** The web console's URL once listening, with its token (`/console?token=...`): the banner's `Console` line. */
  readonly consoleUrl: string
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
  /** Programs, channels, applications and the account's keys, for tests that look inside. */
  readonly account: AccountState
  /** Stops listening and sending; writes the state file a last time. */
  close(): Promise<void>
}

/**
 * The keys the emulator accepts. Keys with only some scopes are for trying scope
 * errors: a key with every scope is still needed to set things up, so one is
 * generated (or taken from the state file) unless given.
 */
function startingKeys(options: EmulatorOptions, saved: StateFile | undefined) {
  const keys: ApiKey[] = (options.apiKeys ?? []).map((key) =>
    typeof key === 'string' ? parseApiKey(key) : key,
  )
  const generatedKey = !keys.some((key) => SCOPES.every((scope) => key.scopes.includes(scope)))
  if (generatedKey) keys.unshift({ key: saved?.generatedKey ?? newId.apiKey(), scopes: SCOPES })
  return { keys, generatedKey }
}

/** The rate limit and monthly quota given, if any (else the service's). */
const limits = (options: EmulatorOptions) => ({
  ...(options.rateLimit === undefined ? {} : { limit: options.rateLimit }),
  ...(options.monthlyQuota === undefined ? {} : { quota: options.monthlyQuota }),
})

/** The engine's options the emulator passes through, when given. */
const deliveryOptions = (options: EmulatorOptions) => ({
  ...(options.attemptTimeoutMs === undefined ? {} : { timeoutMs: options.attemptTimeoutMs }),
  ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
  ...(options.batchIntervalMs === undefined ? {} : { batchIntervalMs: options.batchIntervalMs }),
  ...(options.onAttempt ? { onAttempt: options.onAttempt } : {}),
})

/** Starts listening; resolves to the address bound, rejects when the port is taken. */
async function listenOn(server: Server, port: number, host: string): Promise<AddressInfo> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  return server.address() as AddressInfo
}

/** Every route, with the account's defaults for a conversion emitted without program or channel. */
function emulatorRoutes(
  engine: Engine,
  account: AccountState,
  allowLoopback: boolean,
  onEndpointStatus: EmulatorOptions['onEndpointStatus'],
): Route[] {
  return createRoutes(engine, account, {
    allowLoopback,
    ...(onEndpointStatus ? { onEndpointStatus } : {}),
    // A conversion emitted without them is earned on a program and channel that exist.
    conversionDefaults: () => ({
      programId: account.catalogue.list().at(-1)?.id ?? null,
      channelId: account.channels.list()[0]?.id ?? null,
    }),
  })
}

/**
 * What the emulator starts from: the state file when there is one (so a restart
 * keeps endpoints, deliveries, keys and the clock), the API keys, the clock and
 * the account seeded from the catalogue.
 */
function startingState(options: EmulatorOptions) {
  const saved: StateFile | undefined = options.statePath
    ? readStateFile(options.statePath)
    : undefined
  const { keys, generatedKey } = startingKeys(options, saved)
  const timeScale = options.clock?.timeScale ?? options.timeScale ?? 1
  const clock =
    options.clock ??
    createClock({ timeScale, start: Math.max(Date.now(), saved?.now ?? Number.NEGATIVE_INFINITY) })
  const seed = options.catalogPath
    ? readCatalogueFile(options.catalogPath, DEFAULT_CATALOGUE.channels)
    : (options.catalogue ?? DEFAULT_CATALOGUE)
  const account = createAccountState({ now: clock.now, seed, keys, saved: saved?.account })
  return { saved, keys, generatedKey, clock, account }
}

/**
 * The service's webhook side on this machine: the `/v1` webhook API with keys,
 * scopes, rate limit and quota; the delivery engine (signing, retry schedule,
 * disable after 20 failures, replay); control routes to emit conversions,
 * advance the clock and read the attempt log.
 */
export function createEmulator(options: EmulatorOptions = {}): Emulator {
  const { statePath } = options
  const { saved, keys, generatedKey, clock, account } = startingState(options)
  const allowLoopback = !options.strict

  let engine: Engine | undefined
  const persist = () => {
    if (!statePath || !engine) return
    writeStateFile(statePath, {
      version: 1,
      ...engine.snapshot(),
      ...(generatedKey ? { generatedKey: (keys[0] as ApiKey).key } : {}),
      account: account.snapshot(),
    })
  }
  engine = createEngine({
    clock,
    ...deliveryOptions(options),
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
    ...limits(options),
  })
  const routes = emulatorRoutes(theEngine, account, allowLoopback, options.onEndpointStatus)
  const webConsole: ConsoleServer = createConsole({
    engine: theEngine,
    account,
    routes,
    onChange: persist,
  })
  const handle = createRequestHandler({
    routes,
    keys: account.keys,
    limiter,
    clock,
    onChange: () => {
      persist()
      webConsole.changed()
    },
  })
  const server = createServer((req, res) => {
    if (!webConsole.handle(req, res)) void handle(req, res)
  })
  let url = ''

  return {
    server,
    get url() {
      return url
    },
    get consoleUrl() {
      return url === '' ? '' : webConsole.url(url)
    },
    apiKeys: keys,
    generatedKey,
    clock,
    engine: theEngine,
    allowLoopback,
    account,
    async listen(port = 4010, host = '127.0.0.1') {
      const address = await listenOn(server, port, host)
      webConsole.listening(address)
      const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address
      url = `http://${shown}:${address.port}`
      return url
    },
    async close() {
      webConsole.close()
      await new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
      await theEngine.close()
      persist()
    },
  }
}

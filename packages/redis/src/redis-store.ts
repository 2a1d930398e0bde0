import { createHash, randomUUID } from 'node:crypto'
import type {
  BeginInput,
  BeginResult,
  Claim,
  CloseOptions,
  EventStore,
  FailureStreak,
  Logger,
  PeekInput,
  PeekResult,
} from '@affiliate-webhooks/core'
import {
  closer,
  gatedStreak,
  NO_STREAK,
  resolveStoreTimings,
  STREAK_CODES_KEPT,
  type StoreTimings,
} from '@affiliate-webhooks/core/internal'
import { type Cluster, Redis } from 'ioredis'
import { warnIfEvicting } from './eviction.js'
import {
  checkReplication,
  type RedisReplicationOptions,
  type ReplicationGate,
  replicationGate,
} from './replication.js'
import { BEGIN, COMMIT, EXTEND, PEEK, RECORD_ANSWER, RELEASE } from './scripts.js'

/** Options of {@link redisStore}: a `client`, or a `url` for the store to connect to. */
export interface RedisStoreOptions extends StoreTimings {
  /** An ioredis `Redis` or `Cluster` you created. The store closes it only when you call `store.close()`. */
  client?: Redis | Cluster | undefined
  /**
   * Instead of `client`: a `redis://` or `rediss://` URL. The store then creates
   * the client itself with {@link recommendedRedisOptions} and logs its connection
   * errors (once per outage) through `logger`.
   */
  url?: string | undefined
  /**
   * Where a store made from `url` reports a lost connection, and where any store
   * says once that its Redis can evict keys (a `maxmemory-policy` other than
   * `noeviction` with a `maxmemory` set). Default `console`; `false` silences it.
   */
  logger?: Logger | false | undefined
  /** Prefix of every key; no braces (they would change Cluster slots). Default `aw:`. */
  prefix?: string | undefined
  /**
   * Longest wait for one Redis round trip, ms, whatever the client's own settings.
   * Past it the operation fails and the receiver answers 503, well inside the
   * service's 10 s. Default 2000.
   */
  operationTimeoutMs?: number | undefined
  /**
   * Wait for replicas before every 2xx that rests on Redis state: after the
   * handled mark and watermark are written, and before a `duplicate` or `stale`
   * answer, `WAIT replicas timeoutMs` (on connections of the store's own, made
   * with `client.duplicate()`). Fewer acknowledgements than `replicas` is a store
   * error: 503, never a 2xx. Without it (the default) a failover can lose marks
   * the receiver already acknowledged. See "When the database fails over" in the
   * stores guide.
   */
  replication?: RedisReplicationOptions | undefined
}

/**
 * Client options that make a lost Redis fail fast instead of queueing commands
 * until it returns. Spread them into `new Redis(url, { ...recommendedRedisOptions })`.
 */
export const recommendedRedisOptions = {
  /** Fail at once while disconnected instead of holding commands in memory. */
  enableOfflineQueue: false,
  /** One retry across a reconnect, not twenty. */
  maxRetriesPerRequest: 1,
  /** Give up on a command Redis does not answer. */
  commandTimeout: 1000,
} as const

/** The client given, or one made from `url` with the recommended options. */
export function clientFor(
  {
    client,
    url,
    logger = console,
  }: {
    client?: Redis | Cluster | undefined
    url?: string | undefined
    logger?: Logger | false | undefined
  },
  caller: string,
): Redis | Cluster {
  if (client !== undefined && url !== undefined) {
    throw new TypeError(`${caller}: pass \`client\` or \`url\`, not both`)
  }
  if (client !== undefined) return client
  if (typeof url !== 'string' || url === '') {
    throw new TypeError(
      `${caller}: \`client\` (an ioredis Redis or Cluster) or \`url\` is required`,
    )
  }
  const created = new Redis(url, { ...recommendedRedisOptions })
  // ioredis reports a lost connection as an event; say so once per outage, not per retry.
  let reported = false
  created.on('error', (error: Error) => {
    if (!reported && logger) {
      logger.error(`${caller}: Redis at ${new URL(url).host} unreachable: ${error.message}`)
    }
    reported = true
  })
  created.on('ready', () => {
    reported = false
  })
  return created
}

class Script {
  readonly sha: string
  constructor(readonly lua: string) {
    this.sha = createHash('sha1').update(lua).digest('hex')
  }
}

const scripts = {
  begin: new Script(BEGIN),
  commit: new Script(COMMIT),
  release: new Script(RELEASE),
  extend: new Script(EXTEND),
  peek: new Script(PEEK),
  recordAnswer: new Script(RECORD_ANSWER),
}

const isNoScript = (error: unknown) =>
  error instanceof Error && error.message.startsWith('NOSCRIPT')
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The Redis store, with the client it uses (to close it at shutdown, or check its health). */
export interface RedisEventStore extends EventStore {
  readonly client: Redis | Cluster
  extend(claim: Claim, leaseMs: number): Promise<boolean>
  peek(input: PeekInput): Promise<PeekResult>
  recordAnswer(code: string | null): Promise<FailureStreak>
  /** QUIT within `timeoutMs` (default 5 s), else the socket dropped; never rejects. */
  close(options?: CloseOptions): Promise<void>
}

/** Refuses a prefix that would pin every key to one Cluster slot. */
function checkPrefix(client: Redis | Cluster, prefix: string): void {
  const clientPrefix = (client.options as { keyPrefix?: string } | undefined)?.keyPrefix ?? ''
  if (/[{}]/.test(prefix + clientPrefix)) {
    throw new TypeError("redisStore: `prefix` (and the client's keyPrefix) must not contain { or }")
  }
}

function checkTimeout(timeoutMs: number): number {
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 2 ** 31 - 1) {
    throw new TypeError(
      `redisStore: \`operationTimeoutMs\` must be a whole number of milliseconds >= 1; got ${timeoutMs}`,
    )
  }
  return timeoutMs
}

/**
 * The keys of one event: done and lease, plus the conversion's watermark and lock
 * for conversion events. One hash tag per conversion (or per event without one).
 */
const keysFor =
  (prefix: string) =>
  (eventId: string, conversionId: number | undefined): string[] => {
    const tag =
      conversionId === undefined ? `${prefix}{e:${eventId}}` : `${prefix}{c:${conversionId}}`
    const own = [`${tag}:done:${eventId}`, `${tag}:lease:${eventId}`]
    return conversionId === undefined ? own : [...own, `${tag}:wm`, `${tag}:lock`]
  }

/** The key the replication gate writes before its WAIT: same slot as the event's keys. */
const syncKeyFor =
  (prefix: string) =>
  (eventId: string, conversionId: number | undefined): string =>
    conversionId === undefined
      ? `${prefix}{e:${eventId}}:sync`
      : `${prefix}{c:${conversionId}}:sync`

// While the client is (re)connecting, wait for it within the operation's time
// rather than fail at once: the first request after start-up, or a failover
// that completes within the timeout, still gets an answer.
const CONNECTING = new Set(['wait', 'connecting', 'connect', 'reconnecting'])

type RunScript = (script: Script, keyList: string[], args: (string | number)[]) => Promise<unknown>

/** Runs one script by its SHA (sending it again only after Redis lost it), within `timeoutMs`. */
function scriptRunner(client: Redis | Cluster, timeoutMs: number): RunScript {
  return async (script, keyList, args) => {
    let timer: ReturnType<typeof setTimeout> | undefined
    let onReady: (() => void) | undefined
    const call = async () => {
      const status = (client as { status?: string }).status ?? ''
      if (CONNECTING.has(status)) {
        const ready = new Promise<void>((resolve) => {
          onReady = resolve
          client.once('ready', onReady)
        })
        // A lazyConnect client nobody has used yet connects on its first command:
        // waiting for 'ready' alone would wait for ever.
        if (status === 'wait') client.connect().catch(() => {})
        await ready
      }
      try {
        return await client.evalsha(script.sha, keyList.length, ...keyList, ...args)
      } catch (error) {
        if (!isNoScript(error)) throw error
        return client.eval(script.lua, keyList.length, ...keyList, ...args)
      }
    }
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`Redis did not answer within ${timeoutMs} ms`)),
        timeoutMs,
      )
    })
    try {
      return await Promise.race([call(), timeout])
    } finally {
      clearTimeout(timer)
      if (onReady) client.off('ready', onReady)
    }
  }
}

/**
 * `begin`: one script; only when another event of the conversion is running,
 * poll until it ends, its lease runs out, or `lockWaitMs` is over.
 */
function beginStep(
  run: RunScript,
  keys: ReturnType<typeof keysFor>,
  { leaseMs: defaultLeaseMs, lockWaitMs, dedupeTtl }: ReturnType<typeof resolveStoreTimings>,
) {
  return async ({
    eventId,
    conversionId,
    order,
    leaseMs = defaultLeaseMs,
  }: BeginInput): Promise<BeginResult> => {
    const keyList = keys(eventId, conversionId)
    const token = randomUUID()
    const deadline = Date.now() + lockWaitMs
    let pause = 5
    for (;;) {
      const [status, held] = (await run(scripts.begin, keyList, [
        token,
        leaseMs,
        order,
        dedupeTtl,
      ])) as [string, number?]
      if (status === 'claimed') {
        return { status: 'claimed', claim: { eventId, conversionId, order, token, leaseMs } }
      }
      if (status !== 'locked') return { status } as BeginResult
      // Only contended events pay for this wait.
      const left = deadline - Date.now()
      if (left <= 0) return { status: 'in_progress' }
      await sleep(Math.min(pause, left, held ?? pause))
      pause = Math.min(pause * 2, 50)
    }
  }
}

/**
 * With a replication gate, a `duplicate` or `stale` answer (a 2xx) waits until
 * the replicas have what it rests on; every other result passes as it is.
 */
function settledAnswers(
  gate: ReplicationGate | undefined,
  syncKey: (eventId: string, conversionId: number | undefined) => string,
) {
  return async <R extends { status: string } | string>(
    { eventId, conversionId }: { eventId: string; conversionId?: number | undefined },
    result: R,
  ): Promise<R> => {
    const status = typeof result === 'string' ? result : result.status
    if (gate && (status === 'duplicate' || status === 'stale')) {
      await gate.settle(syncKey(eventId, conversionId))
    }
    return result
  }
}

/**
 * An {@link EventStore} on Redis, shared by every process that uses the same
 * Redis and prefix. Each operation is one Lua script in one round trip
 * (EVALSHA; the script is sent once more only after Redis lost it).
 */
export function redisStore(options: RedisStoreOptions): RedisEventStore {
  const client = clientFor(options, 'redisStore')
  const prefix = options.prefix ?? 'aw:'
  checkPrefix(client, prefix)
  const timings = resolveStoreTimings(options, 'redisStore')
  const operationTimeoutMs = checkTimeout(options.operationTimeoutMs ?? 2000)
  const replication = checkReplication(options.replication)
  const run = scriptRunner(client, operationTimeoutMs)
  const keys = keysFor(prefix)
  const dedupeTtl = String(timings.dedupeTtl)
  const orderingTtl = String(timings.orderingTtl)
  // One streak per prefix (per endpoint), both keys in one slot.
  const streakKeys = [`${prefix}{streak}:count`, `${prefix}{streak}:codes`]
  const gate = replication && replicationGate(client, replication, operationTimeoutMs)
  const syncKey = syncKeyFor(prefix)
  const settled = settledAnswers(gate, syncKey)

  const logger = options.logger === false ? undefined : (options.logger ?? console)
  // Once, off the delivery path: an evicting Redis can drop marks and watermarks.
  warnIfEvicting(client, logger)
  const begin = beginStep(run, keys, timings)
  return {
    client,
    // Without replication a begin's answer is final as it comes: no extra await per delivery.
    begin: gate ? async (input) => settled(input, await begin(input)) : begin,
    // QUIT waits for the replies in flight; with Redis gone it fails at once
    // (enableOfflineQueue off) or never answers: then the socket is dropped.
    close: closer(
      'redisStore',
      logger,
      async () => {
        await Promise.all([client.quit(), gate?.close()])
      },
      () => {
        gate?.disconnect()
        client.disconnect()
      },
    ),

    async commit(claim: Claim): Promise<boolean> {
      const keyList = keys(claim.eventId, claim.conversionId)
      const args = [claim.token, claim.order, dedupeTtl, orderingTtl]
      const result = gate
        ? await gate.settle(syncKey(claim.eventId, claim.conversionId), {
            ...scripts.commit,
            keys: keyList,
            args,
          })
        : await run(scripts.commit, keyList, args)
      return result === 1
    },

    async peek(input: PeekInput): Promise<PeekResult> {
      const [done, , wm] = keys(input.eventId, input.conversionId)
      const [status] = (await run(
        scripts.peek,
        wm === undefined ? [done as string] : [done as string, wm],
        [input.order],
      )) as [PeekResult]
      return settled(input, status)
    },

    async release(claim: Claim): Promise<void> {
      const [, lease, , lock] = keys(claim.eventId, claim.conversionId)
      await run(scripts.release, lock === undefined ? [lease as string] : [lease as string, lock], [
        claim.token,
      ])
    },

    async extend(claim: Claim, leaseMs: number): Promise<boolean> {
      const [, lease, , lock] = keys(claim.eventId, claim.conversionId)
      const held = lock === undefined ? [lease as string] : [lease as string, lock]
      return (await run(scripts.extend, held, [claim.token, leaseMs])) === 1
    },

    recordAnswer: gatedStreak(async (code) => {
      const [count, recentCodes] = (await run(scripts.recordAnswer, streakKeys, [
        code ?? '',
        STREAK_CODES_KEPT,
        dedupeTtl,
      ])) as [number, string[]?]
      return count === 0 ? NO_STREAK : { count, recentCodes: recentCodes ?? [] }
    }),
  }
}

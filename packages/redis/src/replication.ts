import type { Cluster, Redis } from 'ioredis'

/**
 * The `replication` option of `redisStore`: before any 2xx that rests on Redis
 * state, wait with `WAIT` until that many replicas have it.
 */
export interface RedisReplicationOptions {
  /** Replicas that must acknowledge the store's writes before a 2xx; a whole number >= 1. */
  replicas: number
  /**
   * Longest wait for them, ms (`WAIT`'s timeout; a whole number >= 1). Fewer
   * acknowledgements by then is a store error: the receiver answers 503 and the
   * service retries.
   */
  timeoutMs: number
}

/** The option checked, with a message that says what is wrong. */
export function checkReplication(option: unknown): RedisReplicationOptions | undefined {
  if (option === undefined) return undefined
  const { replicas, timeoutMs } = (option ?? {}) as Partial<RedisReplicationOptions>
  const whole = (n: unknown, floor: number) =>
    typeof n === 'number' && Number.isSafeInteger(n) && n >= floor && n <= 2 ** 31 - 1
  if (typeof option !== 'object' || option === null || !whole(replicas, 1)) {
    throw new TypeError(
      `redisStore: \`replication.replicas\` must be a whole number >= 1 (the replicas that must acknowledge before a 2xx); got ${String(replicas)}`,
    )
  }
  if (!whole(timeoutMs, 1)) {
    throw new TypeError(
      `redisStore: \`replication.timeoutMs\` must be a whole number of milliseconds >= 1 (WAIT's timeout; 0 would wait forever); got ${String(timeoutMs)}`,
    )
  }
  return { replicas: replicas as number, timeoutMs: timeoutMs as number }
}

/** Thrown (and answered 503) when fewer replicas acknowledged than asked. */
export class ReplicationShortError extends Error {
  constructor(acknowledged: number, { replicas, timeoutMs }: RedisReplicationOptions) {
    super(
      `redisStore: ${acknowledged} of ${replicas} replica(s) acknowledged the store's writes within ${timeoutMs} ms`,
    )
    this.name = 'ReplicationShortError'
  }
}

const CONNECTING = new Set(['wait', 'connecting', 'connect', 'reconnecting'])

/** Waits for a connection that is still (re)connecting; gives up with `signal`. */
async function whenReady(conn: Redis | Cluster, signal: Promise<never>): Promise<void> {
  const status = (conn as { status?: string }).status ?? ''
  if (!CONNECTING.has(status)) return
  // A lazy connection that was never asked to connect would wait for ever.
  if (status === 'wait') conn.connect().catch(() => {})
  let onReady: (() => void) | undefined
  const ready = new Promise<void>((resolve) => {
    onReady = resolve
    conn.once('ready', resolve)
  })
  try {
    await Promise.race([ready, signal])
  } finally {
    if (onReady) conn.off('ready', onReady)
  }
}

/** A script for the gate to run: its SHA, its text, its keys and arguments. */
export interface GatedScript {
  sha: string
  lua: string
  keys: string[]
  args: (string | number)[]
}

type Reply = [Error | null, unknown][]

/**
 * The store's replication gate. `WAIT` waits for the writes made on the
 * connection it is sent on, and blocks that connection: so the writes it must
 * cover and the `WAIT` go, in one pipeline, over connections of their own
 * (`client.duplicate()`, one per operation in flight, kept for reuse), never
 * over the client every other store command shares. On a Cluster the pipeline's
 * keys send the whole of it, `WAIT` included, to the node that holds them.
 */
export interface ReplicationGate {
  /**
   * Runs `script` (if any), then writes `syncKey` (a short-lived key in the same
   * slot), then `WAIT`s: the write is in the replication stream after every
   * earlier write to that node, so its acknowledgement covers them (a mark
   * written by another process too). Resolves with the script's result.
   */
  settle(syncKey: string, script?: GatedScript): Promise<unknown>
  close(): Promise<void>
  disconnect(): void
}

/** Connections the gate keeps at most; operations beyond wait for one (within their bound). */
const MAX_CONNECTIONS = 32

type Conn = Redis | Cluster

/**
 * The gate's connections: each lent to one operation at a time (a WAIT blocks
 * its connection), up to MAX_CONNECTIONS, kept for reuse.
 */
function connectionPool(client: Redis | Cluster) {
  const idle: Conn[] = []
  const all = new Set<Conn>()
  const waiting: { take: (conn: Conn) => void; fail: (error: Error) => void; gone: boolean }[] = []
  let closed = false
  const make = () => {
    // Connected at once (a copy of a lazyConnect client would wait for a command
    // first), and with no commandTimeout of its own: the gate bounds each
    // operation itself, and ioredis would cut a WAIT short at the client's.
    const made = (client as { isCluster?: boolean }).isCluster
      ? (client as Cluster).duplicate([], { lazyConnect: false })
      : (client as Redis).duplicate({ lazyConnect: false, commandTimeout: undefined })
    // A lost connection fails the operation (503); its events are not news.
    made.on('error', () => {})
    all.add(made)
    return made
  }
  const lend = (conn: Conn | undefined) => {
    // After close no connection is made or kept: it would outlive the store.
    if (closed) {
      conn?.disconnect()
      return
    }
    for (let next = waiting.shift(); next; next = waiting.shift()) {
      if (next.gone) continue
      next.take(conn ?? make())
      return
    }
    if (conn) idle.push(conn)
  }
  /** A connection that may still have a command in flight (timed out, failed) is not reused. */
  const drop = (conn: Conn) => {
    all.delete(conn)
    conn.disconnect()
    lend(undefined)
  }
  const shut = () => {
    closed = true
    idle.length = 0
    for (const waiter of waiting.splice(0)) {
      if (!waiter.gone) waiter.fail(new Error('redisStore: the store is closed'))
    }
  }
  return {
    acquire(signal: Promise<never>): Promise<Conn> {
      if (closed) return Promise.reject(new Error('redisStore: the store is closed'))
      const kept = idle.pop()
      if (kept) return Promise.resolve(kept)
      if (all.size < MAX_CONNECTIONS) return Promise.resolve(make())
      return new Promise<Conn>((resolve, reject) => {
        // Taken or expired, whichever comes first; a connection taken just as the
        // bound ran out goes to the operation, which then drops it.
        const waiter = {
          gone: false,
          take(conn: Conn) {
            waiter.gone = true
            resolve(conn)
          },
          fail(error: Error) {
            waiter.gone = true
            reject(error)
          },
        }
        waiting.push(waiter)
        signal.catch((error) => {
          if (waiter.gone) return
          waiter.gone = true
          reject(error)
        })
      })
    },
    release(conn: Conn) {
      if ((conn as { status?: string }).status === 'ready') lend(conn)
      else drop(conn)
    },
    drop,
    async close() {
      shut()
      await Promise.all([...all].map((conn) => conn.quit().catch(() => conn.disconnect())))
      all.clear()
    },
    disconnect() {
      shut()
      for (const conn of all) conn.disconnect()
      all.clear()
    },
  }
}

export function replicationGate(
  client: Redis | Cluster,
  option: RedisReplicationOptions,
  operationTimeoutMs: number,
): ReplicationGate {
  const pool = connectionPool(client)
  const exec = async (
    conn: Redis | Cluster,
    syncKey: string,
    script: GatedScript | undefined,
    sendText: boolean,
  ) => {
    const commands: unknown[][] = []
    if (script) {
      commands.push(
        sendText
          ? ['eval', script.lua, script.keys.length, ...script.keys, ...script.args]
          : ['evalsha', script.sha, script.keys.length, ...script.keys, ...script.args],
      )
    }
    commands.push(['set', syncKey, '1', 'PX', '10000'], ['wait', option.replicas, option.timeoutMs])
    return (await conn.pipeline(commands as string[][]).exec()) as Reply
  }
  const settle = async (syncKey: string, script?: GatedScript) => {
    let timer: ReturnType<typeof setTimeout> | undefined
    const bound = operationTimeoutMs + option.timeoutMs
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Redis did not answer within ${bound} ms`)), bound)
    })
    let healthy = false
    let conn: Conn | undefined
    try {
      conn = await pool.acquire(expired)
      await whenReady(conn, expired)
      let replies = await Promise.race([exec(conn, syncKey, script, false), expired])
      if (script && replies[0]?.[0]?.message.startsWith('NOSCRIPT')) {
        replies = await Promise.race([exec(conn, syncKey, script, true), expired])
      }
      const failed = replies.find(([error]) => error !== null)
      // A connection whose command failed (a READONLY former primary...) is not kept.
      if (failed) throw failed[0]
      healthy = true
      const acknowledged = Number(replies.at(-1)?.[1])
      if (!(acknowledged >= option.replicas)) throw new ReplicationShortError(acknowledged, option)
      return script ? replies[0]?.[1] : undefined
    } finally {
      clearTimeout(timer)
      if (conn && healthy) pool.release(conn)
      else if (conn) pool.drop(conn)
    }
  }
  return { settle, close: () => pool.close(), disconnect: () => pool.disconnect() }
}

import { type Cluster, Redis, type RedisOptions } from 'ioredis'

/** What `connection` takes: an ioredis client you created, or options for one. */
export type QueueConnection = Redis | Cluster | RedisOptions

/** The queue's key prefix when none is given; BullMQ's own default. */
export const DEFAULT_PREFIX = 'bull'

// By shape, not instanceof: a client from another copy of ioredis (5 beside 6) counts too.
const isClient = (connection: QueueConnection): connection is Redis | Cluster =>
  typeof (connection as Redis).sendCommand === 'function' &&
  typeof (connection as Redis).duplicate === 'function'

/**
 * A client for one role, and whether we made it (then we close it). Receivers
 * want a command to fail at once while Redis is away (a 503 the service retries);
 * workers want BullMQ's rule for blocking clients: `maxRetriesPerRequest: null`.
 */
export function clientFor(
  connection: QueueConnection,
  role: 'producer' | 'worker',
): { client: Redis | Cluster; owned: boolean } {
  if (isClient(connection)) return { client: connection, owned: false }
  const options: RedisOptions =
    role === 'producer'
      ? { enableOfflineQueue: false, maxRetriesPerRequest: 1, ...connection }
      : { ...connection, maxRetriesPerRequest: null }
  // ioredis 6 types its options per reply mode; any RedisOptions object is valid.
  return { client: new Redis(options as never), owned: true }
}

/**
 * A BullMQ job id may not contain `:` (it builds Redis keys from it). Event ids
 * are `evt_...` and never do; an id that did is escaped, one to one.
 */
export const jobIdFor = (eventId: string): string =>
  /[%:]/.test(eventId) ? eventId.replace(/[%:]/g, (c) => (c === '%' ? '%25' : '%3A')) : eventId

/**
 * The per-conversion index of queued, not yet settled events (event id scored by
 * its order). It lives beside the queue's keys, so it shares the queue name's hash
 * tag on a Cluster, and lets a worker see an older event still waiting.
 */
export const pendingKey = (prefix: string, queueName: string, conversionId: number): string =>
  `${prefix}:${queueName}:aw-pending:${conversionId}`

/** How long an index entry may outlive its job (abandoned by a removed job): 72 h. */
export const PENDING_TTL_MS = 72 * 60 * 60 * 1000

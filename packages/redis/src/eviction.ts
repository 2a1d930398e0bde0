import type { Logger } from '@affiliate-webhooks/core'
import type { Cluster, Redis } from 'ioredis'

/** What `INFO memory` says about eviction, and whether it can drop this store's keys. */
export interface EvictionRisk {
  /** `maxmemory_policy`, e.g. `noeviction`, `allkeys-lru`, `volatile-ttl`. */
  policy: string
  /** `maxmemory` in bytes; 0 is no limit (nothing is evicted). */
  maxmemory: number
  /**
   * Redis may evict the store's keys under memory pressure: a limit is set and
   * the policy is not `noeviction`. Every key the store writes has a TTL, so the
   * `volatile-*` policies can evict them as well as the `allkeys-*` ones.
   */
  risky: boolean
}

/**
 * Reads `maxmemory` and `maxmemory_policy` from the text of `INFO` (or `INFO
 * memory`); undefined when either is missing (a managed service that hides
 * them): then nothing can be said.
 */
export function evictionRisk(info: string): EvictionRisk | undefined {
  const field = (name: string) => new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim()
  const policy = field('maxmemory_policy')
  const limit = field('maxmemory')
  if (policy === undefined || policy === '' || limit === undefined || !/^\d+$/.test(limit)) {
    return undefined
  }
  const maxmemory = Number(limit)
  return { policy, maxmemory, risky: maxmemory > 0 && policy !== 'noeviction' }
}

/** The one line said when Redis can evict the store's keys. */
export function evictionWarning({ policy, maxmemory }: EvictionRisk): string {
  const why = policy.startsWith('volatile-')
    ? ' (every key the store writes has a TTL, so a volatile-* policy evicts them too)'
    : ''
  return `redisStore: Redis has maxmemory-policy ${policy} with maxmemory ${maxmemory} bytes, so under memory pressure it can evict the store's de-duplication marks and watermarks${why}: an event is then handled twice, or an older status applied over a newer one. Set maxmemory-policy noeviction (a full Redis then refuses writes: the receiver answers 503 and the service retries).`
}

/** The risk on the first node (of a Cluster's masters) that can evict, else on the first that answers. */
async function readRisk(client: Redis | Cluster): Promise<EvictionRisk | undefined> {
  const nodes =
    'nodes' in client && typeof client.nodes === 'function'
      ? (client as Cluster).nodes('master')
      : [client as Redis]
  const risks = await Promise.all(
    nodes.map((node) =>
      node.info('memory').then(
        (text) => evictionRisk(text),
        // A managed service may refuse INFO: then nothing is known of that node.
        () => undefined,
      ),
    ),
  )
  return risks.find((risk) => risk?.risky) ?? risks.find((risk) => risk !== undefined)
}

/**
 * Once the client is ready (now, or when it first connects), reads `INFO
 * memory` once, off the delivery path, and warns once when Redis can evict the
 * store's keys. Any failure to read it is ignored: nothing is said.
 */
export function warnIfEvicting(client: Redis | Cluster, logger: Logger | undefined): void {
  if (logger === undefined || typeof client.info !== 'function') return
  const check = () => {
    readRisk(client).then(
      (risk) => {
        if (risk?.risky) logger.warn(evictionWarning(risk))
      },
      () => {},
    )
  }
  if ((client as { status?: string }).status === 'ready') check()
  else if (typeof client.once === 'function') client.once('ready', check)
}

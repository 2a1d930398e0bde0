/**
 * `@affiliate-webhooks/redis/internal`: what the CLI shares with this package
 * and no user calls: a connection that fails at once, and keeping a secret the
 * service has shown once (`endpoints create --redis`, `rotate`). Shared by
 * sibling packages only; not covered by semver: any release may change or
 * remove a name here. Users import `@affiliate-webhooks/redis`.
 *
 * @packageDocumentation
 */

export { type EvictionRisk, evictionRisk, evictionWarning } from './eviction.js'
export { connectRedisNow, type KeptSecret, keepShownSecret } from './secret-keeping.js'

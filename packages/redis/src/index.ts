export { STREAK_RESET_EVERY_MS } from '@affiliate-webhooks/core/internal'
export {
  type RedisEventStore,
  type RedisStoreOptions,
  recommendedRedisOptions,
  redisStore,
} from './redis-store.js'
export type { RedisReplicationOptions } from './replication.js'
export {
  type RedisSecretSource,
  type RedisSecretSourceOptions,
  redisSecretSource,
} from './secret-source.js'

export {
  type RedisEventStore,
  type RedisStoreOptions,
  recommendedRedisOptions,
  redisStore,
  STREAK_RESET_EVERY_MS,
} from './redis-store.js'
export {
  type RedisSecretSource,
  type RedisSecretSourceOptions,
  redisSecretSource,
} from './secret-source.js'

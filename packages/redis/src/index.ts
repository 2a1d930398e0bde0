export {
  type RedisEventStore,
  type RedisStoreOptions,
  recommendedRedisOptions,
  redisStore,
} from './redis-store.js'

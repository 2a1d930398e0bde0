export { type RedisStoreOptions, recommendedRedisOptions, redisStore } from './redis-store.js'

import { redisStore } from '@affiliate-webhooks/redis'

/**
 * With REDIS_URL set, de-duplication and ordering live in Redis, shared by every
 * route and every instance; without it, each route keeps its own in memory.
 * Node runtime only: ioredis needs TCP sockets, which the Edge runtime lacks.
 */
export const store = process.env.REDIS_URL ? redisStore({ url: process.env.REDIS_URL }) : undefined

import { redisStore } from '@affiliate-webhooks/redis'

/**
 * With REDIS_URL set, de-duplication and ordering live in Redis, shared by every
 * process of the app (PM2, several containers); without it, in this process.
 */
export const store = process.env.REDIS_URL ? redisStore({ url: process.env.REDIS_URL }) : undefined

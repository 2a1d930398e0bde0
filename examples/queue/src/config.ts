import { recommendedRedisOptions, redisStore } from '@affiliate-webhooks/redis'
import { Redis } from 'ioredis'

/** Shared by both processes: the same Redis, queue name and store. */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
export const QUEUE_NAME = process.env.QUEUE_NAME ?? 'affiliate-webhooks'
const { hostname, port } = new URL(REDIS_URL)
export const connection = { host: hostname, port: Number(port || 6379) }

/** The dedupe and ordering store both sides use. */
export function store() {
  const client = new Redis(REDIS_URL, { ...recommendedRedisOptions })
  client.on('error', (error: Error) => console.error(`redis: ${error.message}`))
  return redisStore({ client, prefix: 'example-queue:' })
}

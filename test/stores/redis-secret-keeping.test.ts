/**
 * Keeping a secret the service shows once, on the machine's Redis: the
 * connection made before anything irreversible, the write (alone or as a
 * rotation), what the key holds read back, and the file it goes to when the
 * write fails.
 */
import { randomUUID } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { redisSecretSource } from '@affiliate-webhooks/redis'
import { connectRedisNow, keepShownSecret } from '@affiliate-webhooks/redis/internal'
import { afterAll, describe, expect, it } from 'vitest'
import { REDIS_URL } from '../support/redis-servers.js'

const endpointIds: string[] = []
const newEndpoint = () => {
  const id = `wh_keeping_${randomUUID()}`
  endpointIds.push(id)
  return id
}

afterAll(async () => {
  const client = await connectRedisNow(REDIS_URL)
  for (const endpointId of endpointIds)
    await client.del(redisSecretSource({ client, endpointId }).key)
  client.disconnect()
})

describe('connectRedisNow', () => {
  it('connects at once, refuses what is not a URL, and names the host it cannot reach', async () => {
    const client = await connectRedisNow(REDIS_URL)
    expect(await client.ping()).toBe('PONG')
    client.disconnect()
    await expect(connectRedisNow('not a url')).rejects.toThrow(TypeError)
    // A URL that does not parse is never echoed: it may carry a password.
    const refused = await connectRedisNow('redis//:hunter2-secret@host:6379').catch((e) => e)
    expect(refused).toBeInstanceOf(TypeError)
    expect(String(refused.message)).not.toContain('hunter2')
    await expect(connectRedisNow('redis://127.0.0.1:1')).rejects.toThrow(
      /^cannot reach Redis at 127\.0\.0\.1:1 \(.+\); nothing was changed$/,
    )
  })
})

describe('keepShownSecret', () => {
  it('stores a new secret alone, then a rotation first with the old one kept for the grace', async () => {
    const client = await connectRedisNow(REDIS_URL)
    try {
      const endpointId = newEndpoint()
      const source = redisSecretSource({ client, endpointId })
      const stored = await keepShownSecret({ client, endpointId, secret: 'whsec_first_AAAA' })
      // The key and, stored alone, nothing more: the CLI's text/secret-text.ts writes the lines.
      expect(stored).toEqual({ key: source.key, held: null })
      expect(await source.getSecrets()).toEqual(['whsec_first_AAAA'])
      const rotated = await keepShownSecret({
        client,
        endpointId,
        secret: 'whsec_second_BBBB',
        graceMs: 600_000,
      })
      expect(await source.getSecrets()).toEqual(['whsec_second_BBBB', 'whsec_first_AAAA'])
      expect(rotated.key).toBe(source.key)
      expect(rotated.held).toEqual([
        { secret: 'whsec_second_BBBB', expiresAt: null },
        { secret: 'whsec_first_AAAA', expiresAt: expect.any(Number) },
      ])
      expect(rotated.held?.[1]?.expiresAt).toBeGreaterThan(Date.now() + 500_000)
    } finally {
      client.disconnect()
    }
  })

  it('when the write fails, puts the secret in a file only its owner reads and says where', async () => {
    const client = await connectRedisNow(REDIS_URL)
    client.disconnect()
    const dir = mkdtempSync(join(tmpdir(), 'aw-keep-'))
    try {
      const error = await keepShownSecret({
        client,
        endpointId: 'wh_lost',
        secret: 'whsec_kept_CCCC',
        fallbackDir: dir,
      }).catch((caught: Error) => caught)
      expect(error).toBeInstanceOf(Error)
      const [file] = readdirSync(dir)
      expect(file).toMatch(/^whsec-wh_lost-\d+\.txt$/)
      const path = join(dir, file as string)
      expect((error as Error).message).toContain(`it is in ${path} (mode 600)`)
      expect(readFileSync(path, 'utf8')).toBe('whsec_kept_CCCC\n')
      expect(statSync(path).mode & 0o777).toBe(0o600)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

/**
 * `secrets put` and `rotate --redis` as real processes against the emulator
 * process and the machine's Redis: the move from an env-var secret to
 * redisSecretSource, and what Redis holds after a rotation, read back.
 */
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { affiliateWebhook } from '@affiliate-webhooks/node'
import { redisSecretSource } from '@affiliate-webhooks/redis'
import { Redis } from 'ioredis'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { CLI, killLive, startLoop } from '../support/cli-live.js'
import { type Receiver, startReceiver } from '../support/emulator-harness.js'
import { REDIS_URL } from '../support/redis-servers.js'
import { run } from '../support/run-process.js'

const redis = new Redis(REDIS_URL)
const keys: string[] = []
const receivers: Receiver[] = []
const work = mkdtempSync(join(tmpdir(), 'aw-secrets-'))
afterEach(async () => {
  killLive()
  await Promise.all(receivers.splice(0).map((r) => r.close()))
})
afterAll(async () => {
  if (keys.length > 0) await redis.unlink(...keys)
  redis.disconnect()
  rmSync(work, { recursive: true, force: true })
})

const put = (args: string[], env: Record<string, string | undefined> = {}) =>
  run(process.execPath, [CLI, 'secrets', 'put', ...args], { env })

describe('secrets put', () => {
  it('stores the secret where redisSecretSource reads it; a receiver started just then verifies its first delivery; rotate reports what Redis holds', async () => {
    const { cli, env } = await startLoop()
    const receiver = await startReceiver()
    receivers.push(receiver)
    const made = await cli('endpoints', 'create', '--url', receiver.url, '--show-secret')
    const id = /^id\s+(\S+)$/m.exec(made.stdout)?.[1] as string
    const secret = /^secret (whsec_\S+)$/m.exec(made.stdout)?.[1] as string
    const key = `aw:secrets:{${id}}`
    keys.push(key)

    const stored = await put([id, '--redis', REDIS_URL], { AFFILIATE_WEBHOOK_SECRET: secret })
    expect(stored.code, stored.stderr).toBe(0)
    expect(stored.stdout).toBe(
      `secret stored in Redis key ${key}\nRedis key ${key} holds 1 secret: ...${secret.slice(-4)} (current); a delivery signed with any other secret will not verify\n`,
    )
    expect(stored.stdout + stored.stderr).not.toContain(secret)

    // A receiver made from a url, its first delivery moments later.
    const source = redisSecretSource({ url: REDIS_URL, endpointId: id, logger: false })
    receiver.use(
      affiliateWebhook({ secret: source, logger: false, onConversion: () => {} }) as (
        req: IncomingMessage,
        res: ServerResponse,
      ) => void,
    )
    try {
      const triggered = await cli('trigger', 'conversion.created', '--wait')
      expect(triggered.code, triggered.stdout + triggered.stderr).toBe(0)
      expect(triggered.stdout).toMatch(/attempt 1 {2}200 processed \(succeeded\)/)

      const rotated = await cli('rotate', id, '--redis', REDIS_URL, '--grace', '10m')
      expect(rotated.code, rotated.stderr).toBe(0)
      const held = await source.entries()
      expect(held).toHaveLength(2)
      expect(held[1]?.secret).toBe(secret)
      expect(rotated.stdout).toContain(
        `Redis key ${key} holds 2 secrets: ...${held[0]?.secret.slice(-4)} (current), ...${secret.slice(-4)} (verifies until ${new Date(held[1]?.expiresAt as number).toISOString()})`,
      )
      expect(rotated.stdout).not.toMatch(/whsec_/)
    } finally {
      source.client.disconnect()
    }
    expect(env.AFFILIATE_API_KEY).toMatch(/^la_/)
  })

  it('reads the secret from --secret-file', async () => {
    const id = `wh_clisecrets_${randomUUID()}`
    keys.push(`aw:secrets:{${id}}`)
    const file = join(work, 'secret.txt')
    writeFileSync(file, 'whsec_from_a_file_1234\n')
    const stored = await put([id, '--redis', REDIS_URL, '--secret-file', file])
    expect(stored.code, stored.stderr).toBe(0)
    expect(await redisSecretSource({ client: redis, endpointId: id }).getSecrets()).toEqual([
      'whsec_from_a_file_1234',
    ])
  })

  it.each([
    [
      'a secret as a flag',
      ['wh_1', '--redis', REDIS_URL, '--secret', 'whsec_x'],
      {},
      /--secret is not accepted here/,
    ],
    [
      'no secret',
      ['wh_1', '--redis', REDIS_URL],
      {},
      /no secret: set AFFILIATE_WEBHOOK_SECRET or pass --secret-file/,
    ],
    [
      'an API key where the secret belongs',
      ['wh_1', '--redis', REDIS_URL],
      { AFFILIATE_WEBHOOK_SECRET: `la_${'k'.repeat(32)}` },
      /not an endpoint secret \(whsec_\.\.\., no spaces\)\nhint: that is an API key \(la_\.\.\.\), not the endpoint secret \(whsec_\.\.\.\)/,
    ],
    ['no --redis', ['wh_1'], { AFFILIATE_WEBHOOK_SECRET: 'whsec_x' }, /--redis URL is required/],
    ['no endpoint id', [], {}, /missing endpoint id/],
  ])('%s: exit 2 and the reason', async (_, args, env, message) => {
    const result = await put(args, env)
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(message)
    expect(result.stderr).not.toContain('la_kkkk')
  })

  it('a Redis that does not answer: one line, exit 4, nothing stored', async () => {
    const result = await put(['wh_1', '--redis', 'redis://127.0.0.1:1'], {
      AFFILIATE_WEBHOOK_SECRET: 'whsec_x',
    })
    expect(result.code).toBe(4)
    expect(result.stderr).toMatch(/cannot reach Redis at 127\.0\.0\.1:1 .*nothing was changed/)
  })
})

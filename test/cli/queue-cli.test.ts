/** `affiliate-webhooks queue stats|failed|retry` against a real queue on the machine's Redis. */
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { JOB_STATES } from '@affiliate-webhooks/bullmq'
import { buildConversionEvent } from '@affiliate-webhooks/core/testing'
import { afterAll, describe, expect, it } from 'vitest'
import { main } from '../../packages/cli/src/main.js'
import { queueSetup } from '../queue/queue-harness.js'
import { REDIS_URL } from '../support/redis-servers.js'

async function cli(args: string[]) {
  let stdout = ''
  let stderr = ''
  const code = await main(args, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    stdin: (async function* () {})(),
    env: {},
  })
  return { code, stdout, stderr }
}

describe('affiliate-webhooks queue', () => {
  const setup = queueSetup('queue-cli', { attempts: 2 })
  afterAll(() => setup.close())
  const where = ['--redis', REDIS_URL, '--queue', setup.queueName]

  it('counts by state, lists a failed job with its event, conversion and error, and retries it', async () => {
    let fail = true
    setup.startWorker({
      onConversion: () => {
        if (fail) throw new Error('crm timeout')
      },
    })
    const event = buildConversionEvent({ conversion: { id: 7071 } })
    await setup.handoff.enqueue({
      event,
      conversionId: 7071,
      order: Date.parse(event.createdAt) * 2000,
      attempt: 1,
      signedAt: Math.floor(Date.now() / 1000),
    })
    await setup.settle()

    const stats = await cli(['queue', 'stats', ...where, '--json'])
    expect(stats.code).toBe(0)
    expect(JSON.parse(stats.stdout)).toMatchObject({ failed: 1, completed: 0, waiting: 0 })

    const failed = await cli(['queue', 'failed', ...where])
    expect(failed).toMatchObject({ code: 0 })
    expect(failed.stdout).toBe(`${event.id}  conversion 7071  tries 2  crm timeout\n`)

    expect((await cli(['queue', 'retry', 'evt_not_there', ...where])).code).toBe(1)
    fail = false
    const retried = await cli(['queue', 'retry', event.id, ...where])
    expect(retried).toMatchObject({ code: 0, stdout: '1 job moved back to waiting\n' })
    await setup.settle()
    const after = await cli(['queue', 'stats', ...where])
    expect(after.stdout).toMatch(/^completed\s+1$/m)
    expect(after.stdout).toMatch(/^failed\s+0$/m)
    expect(await cli(['queue', 'retry', '--all', ...where])).toMatchObject({ code: 0 })
  })

  it('runs from the built binary, which loads bullmq and ioredis from the app', async () => {
    const bin = new URL('../../packages/cli/dist/cli.js', import.meta.url).pathname
    const { stdout } = await promisify(execFile)(process.execPath, [
      bin,
      'queue',
      'stats',
      ...where,
      '--json',
    ])
    // The same counts, by the same names, as the library's queueStats.
    expect(Object.keys(JSON.parse(stdout))).toEqual([...JOB_STATES])
  })

  it('refuses wrong usage with exit code 2 and an unreachable Redis with 1', async () => {
    expect((await cli(['queue', 'purge', ...where])).code).toBe(2)
    expect((await cli(['queue', 'retry', ...where])).code).toBe(2)
    expect((await cli(['queue', 'stats'])).code).toBe(2)
    const down = await cli(['queue', 'stats', '--redis', 'redis://127.0.0.1:1'])
    expect(down.code).toBe(1)
    expect(down.stderr).toMatch(/unreachable/)
  })
})

/**
 * `simulate` against a receiver that is down for a moment (a crash or a restart):
 * under a compressed clock the 20-failures rule disables the endpoint and the
 * summary says why; `--disable-after off` keeps it enabled, so every delivery
 * ends up acknowledged. The built CLI as a process, a real receiver on loopback.
 */
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Conversion } from '@affiliate-webhooks/core'
import { memoryStore } from '@affiliate-webhooks/core'
import { affiliateWebhook } from '@affiliate-webhooks/node'
import { afterEach, describe, expect, it } from 'vitest'
import { CLI } from '../support/cli-live.js'
import { run } from '../support/run-process.js'

const SECRET = 'whsec_simulate_disable_test'
const servers: Server[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

const cli = (args: string[]) => run(process.execPath, [CLI, ...args])

/**
 * A receiver (the node adapter, a memory store) that answers 500 to its first
 * `downFor` requests, as one that crashed and is coming back, then works.
 */
async function restartingReceiver(downFor: number) {
  const table = new Map<number, Conversion>()
  const handler = affiliateWebhook({
    path: '/hooks',
    secret: SECRET,
    store: memoryStore(),
    logger: false,
    onConversion(conversion) {
      table.set(conversion.id, conversion)
    },
  })
  let requests = 0
  const server = createServer((req, res) => {
    requests++
    if (requests <= downFor) {
      req.resume()
      res.writeHead(500, { 'content-type': 'text/plain' }).end('restarting')
      return
    }
    handler(req, res)
  })
  servers.push(server)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`
  return { url, table, requests: () => requests }
}

const simulate = (url: string, ...more: string[]) =>
  cli([
    'simulate',
    '--url',
    url,
    '--secret',
    SECRET,
    '--conversions',
    '10',
    '--time-scale',
    '36000',
    '--seed',
    '11',
    '--quiet',
    ...more,
  ])

describe('simulate under time compression, a receiver down for its first 30 requests', () => {
  it('disables the endpoint after 20 failed attempts in a row and says why, naming --disable-after off', async () => {
    const receiver = await restartingReceiver(30)
    const result = await simulate(receiver.url)
    expect(result.code, result.stderr).toBe(1)
    expect(result.stdout).toMatch(/^endpoint +DISABLED after 20 failed attempts in a row$/m)
    expect(result.stdout).toMatch(/^status codes +500 x 20$/m)
    const note = result.stdout.split('\n').filter((line) => line.startsWith('note: '))
    expect(note).toEqual([
      "note: time scale 36000: a real second is 10 h of service time, so a receiver down or restarting for a few real seconds can fail 20 attempts in a row, which disables the endpoint as the service would, and the rest of those conversions' events are then never delivered (queued deliveries fail, later events are not queued); for a crash or restart test, --disable-after off keeps the endpoint enabled.",
    ])
    // The receiver came back after 30 requests, but only 20 were sent: nothing reached it.
    expect(receiver.requests()).toBe(20)
    expect(receiver.table.size).toBe(0)
  })

  it('--json carries the rule used and the same explanation as a hint', async () => {
    const receiver = await restartingReceiver(30)
    const result = await simulate(receiver.url, '--json')
    expect(result.code, result.stderr).toBe(1)
    const summary = JSON.parse(result.stdout)
    expect(summary.settings.disableAfterFailures).toBe(20)
    expect(summary.endpoint).toMatchObject({ status: 'disabled', consecutiveFailures: 20 })
    expect(summary.hint).toMatch(/^time scale 36000: a real second is 10 h of service time, /)
    expect(summary.hint).toMatch(/--disable-after off keeps the endpoint enabled$/)
  })

  it('with --disable-after off the endpoint stays enabled: the failures are retried and every delivery succeeds', async () => {
    const receiver = await restartingReceiver(30)
    const result = await simulate(receiver.url, '--disable-after', 'off')
    expect(result.code, result.stdout).toBe(0)
    expect(result.stdout).toMatch(/, seed 11, disable after off$/m)
    expect(result.stdout).toMatch(
      /^endpoint +active, never disabled \(disabling off; 0 failed attempts in a row at the end\)$/m,
    )
    // 30 failures in a row: past the service's 20, and still enabled.
    expect(result.stdout).toMatch(/^status codes +200 x \d+, 500 x 30$/m)
    expect(result.stdout).not.toMatch(/^note: /m)
    expect(result.stdout).toMatch(/Every delivery succeeded\.\n$/)

    const json = await simulate(
      (await restartingReceiver(30)).url,
      '--disable-after',
      'off',
      '--json',
    )
    expect(json.code, json.stderr).toBe(0)
    const summary = JSON.parse(json.stdout)
    expect(summary).toMatchObject({
      ok: true,
      notQueued: 0,
      settings: { disableAfterFailures: 'off' },
    })
    expect(summary.attempts.failed).toBe(30)
    expect(summary.endpoint.status).toBe('active')
    expect(summary.deliveries.succeeded).toBe(summary.deliveries.total)
    expect(summary.hint).toBeUndefined()
    expect(receiver.table.size).toBe(10)
  })

  it('--disable-after 40 is a rule of 40: 30 failures in a row do not disable the endpoint', async () => {
    const receiver = await restartingReceiver(30)
    const result = await simulate(receiver.url, '--disable-after', '40', '--json')
    expect(result.code, result.stderr).toBe(0)
    const summary = JSON.parse(result.stdout)
    expect(summary.settings.disableAfterFailures).toBe(40)
    expect(summary.attempts.failed).toBe(30)
    expect(summary.endpoint.status).toBe('active')
  })
})

describe('simulate --disable-after with a value it cannot use', () => {
  for (const value of ['never', '0', '2.5', '']) {
    it(`refuses "${value}" in one line, with a hint, exit 2, before sending anything`, async () => {
      const receiver = await restartingReceiver(0)
      const result = await simulate(receiver.url, '--disable-after', value)
      expect(result.code).toBe(2)
      expect(result.stdout).toBe('')
      expect(result.stderr.split('\n')).toEqual([
        `affiliate-webhooks simulate: --disable-after must be a whole number >= 1 or off, not "${value}"`,
        'hint: --disable-after off never disables the endpoint during the run; a number N disables it after N failed attempts in a row (the service: 20)',
        'Run "affiliate-webhooks simulate --help" for usage.',
        '',
      ])
      expect(receiver.requests()).toBe(0)
    })
  }
})

/**
 * The management commands as users run them: the built `affiliate-webhooks`
 * binary in its own process, against the emulator over real HTTP, with the
 * project's node adapter as the receiver. Key from AFFILIATE_API_KEY, address
 * from AFFILIATE_API_URL.
 */
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { createClock } from '@affiliate-webhooks/emulator'
import { afterEach, describe, expect, it } from 'vitest'
import {
  conversion,
  type Harness,
  HOUR,
  type Receiver,
  startEmulator,
  startPublisher,
} from '../support/emulator-harness.js'
import { type Run, run } from '../support/run-process.js'

const root = new URL('../..', import.meta.url).pathname
const BIN = join(root, 'packages/cli/bin/affiliate-webhooks.js')
const KEY = `la_${'k'.repeat(32)}`
const START = Date.UTC(2026, 0, 5, 10, 0, 0)

/** The CLI as a process, with no API key or URL but those a test gives. */
const cli = (args: string[], env: Record<string, string | undefined>) =>
  run(process.execPath, [BIN, ...args], {
    env: { AFFILIATE_API_KEY: undefined, AFFILIATE_API_URL: undefined, ...env },
  })

const harnesses: Harness[] = []
const receivers: Receiver[] = []
afterEach(async () => {
  await Promise.all([...harnesses.splice(0), ...receivers.splice(0)].map((x) => x.close()))
})

async function setup(options: Parameters<typeof startEmulator>[0] = {}) {
  const h = await startEmulator({
    apiKeys: [KEY],
    clock: createClock({ start: START }),
    ...options,
  })
  harnesses.push(h)
  const env = { AFFILIATE_API_URL: h.base, AFFILIATE_API_KEY: KEY }
  const run = (...args: string[]) => cli(args, env)
  return { h, env, run }
}

async function createEndpoint(run: (...args: string[]) => Promise<Run>, url: string) {
  const made = await run('endpoints', 'create', '--url', url, '--show-secret', '--json')
  expect(made.code, made.stderr).toBe(0)
  return JSON.parse(made.stdout) as { id: string; secret: string }
}

describe('endpoints', () => {
  it('create, list, get, update, disable, enable, delete', async () => {
    const { run } = await setup()
    const publisher = await startPublisher(receivers)
    const refused = await run('endpoints', 'create', '--url', publisher.url)
    expect(refused.code).toBe(2)
    expect(refused.stderr).toMatch(
      /shown only once: pass --redis URL to store it, or --show-secret/,
    )

    const made = await run(
      'endpoints',
      'create',
      '--url',
      publisher.url,
      '--description',
      'shop',
      '--show-secret',
    )
    expect(made.code, made.stderr).toBe(0)
    const id = /^id\s+(\S+)$/m.exec(made.stdout)?.[1] as string
    expect(made.stdout).toMatch(/^secret whsec_\S+$/m)
    const list = await run('endpoints', 'list')
    expect(list.stdout).toMatch(/^ID\s+STATUS\s+FAILURES\s+URL\s+EVENTS$/m)
    expect(list.stdout).toContain(id)
    const got = await run('endpoints', 'get', id, '--json')
    expect(JSON.parse(got.stdout)).toMatchObject({ id, description: 'shop', status: 'active' })
    expect(got.stdout).not.toContain('whsec_')
    expect((await run('endpoints', 'update', id, '--description', '')).stdout).toMatch(
      /^description\s+-$/m,
    )
    expect((await run('endpoints', 'disable', id)).stdout).toBe(`${id} is disabled\n`)
    expect((await run('endpoints', 'enable', id)).stdout).toBe(`${id} is active\n`)
    expect((await run('endpoints', 'delete', id)).stdout).toBe(`${id} deleted\n`)
    expect((await run('endpoints', 'list')).stdout).toMatch(/^no endpoints/)
  })
})

describe('bad input: one line, a non-zero exit, no stack trace', () => {
  it.each([
    [
      'a wrong key',
      ['endpoints', 'list'],
      { AFFILIATE_API_KEY: `la_${'z'.repeat(32)}` },
      3,
      /401 invalid_api_key/,
    ],
    [
      'a malformed key',
      ['endpoints', 'list'],
      { AFFILIATE_API_KEY: 'la_short' },
      2,
      /apiKey is not an API key/,
    ],
    [
      'no base URL',
      ['endpoints', 'list'],
      { AFFILIATE_API_URL: undefined },
      2,
      /no service address: set AFFILIATE_API_URL/,
    ],
    ['an id that does not exist', ['endpoints', 'get', 'we_nope'], {}, 3, /404 webhook_not_found/],
    [
      'a key as a flag',
      ['endpoints', 'list', '--api-key', KEY],
      {},
      2,
      /--api-key is not accepted/,
    ],
    ['a missing id', ['doctor'], {}, 2, /missing endpoint id/],
    ['an unknown sub-command', ['endpoints', 'frobnicate'], {}, 2, /expected one of list, get/],
  ] as const)('%s', async (_, args, env, code, message) => {
    const { env: base } = await setup()
    const result = await cli([...args], { ...base, ...env })
    expect(result.code).toBe(code)
    expect(result.stderr).toMatch(message)
    expect(result.stderr).not.toMatch(/\n\s+at /)
    expect(result.stderr + result.stdout).not.toContain(`la_${'z'.repeat(32)}`)
  })

  it('a service that answers HTML, or nothing at all', async () => {
    const html = createServer((_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' })
      res.end('<html><body>Bad gateway</body></html>')
    }).listen(0, '127.0.0.1')
    await once(html, 'listening')
    const url = `http://127.0.0.1:${(html.address() as AddressInfo).port}`
    const answered = await cli(['endpoints', 'list'], {
      AFFILIATE_API_URL: url,
      AFFILIATE_API_KEY: KEY,
    })
    expect(answered.code).toBe(4)
    expect(answered.stderr).toMatch(
      /502 with text\/html, not the API's JSON envelope; is the base URL the service's\?/,
    )
    html.close()
    await once(html, 'close')
    const silent = await cli(['endpoints', 'list'], {
      AFFILIATE_API_URL: url,
      AFFILIATE_API_KEY: KEY,
    })
    expect(silent.code).toBe(4)
    // One line for the error, one for its usual cause.
    expect(silent.stderr.trim().split('\n')).toHaveLength(2)
    expect(silent.stderr).toMatch(/ECONNREFUSED/)
    expect(silent.stderr).toMatch(/^hint: nothing listens there: start the emulator/m)
    const debug = await cli(['endpoints', 'list', '--debug'], {
      AFFILIATE_API_URL: url,
      AFFILIATE_API_KEY: KEY,
    })
    expect(debug.stderr).toMatch(/\n\s+at /)
  }, 30_000)
})

describe('test, deliveries, replay', () => {
  it('test --wait follows the delivery to success; deliveries lists it; replay sends it again', async () => {
    // Service time 600x real: the service's minute batches come every 100 ms.
    const { run } = await setup({ clock: createClock({ start: START, timeScale: 600 }) })
    const publisher = await startPublisher(receivers)
    const { id, secret } = await createEndpoint(run, publisher.url)
    publisher.useSecret(secret)
    const test = await run('test', id, '--wait', '--poll', '0.05s', '--timeout', '20s')
    expect(test.code, test.stderr).toBe(0)
    expect(test.stdout).toMatch(/^queued webhook\.test evt_\w+ as delivery (\S+)$/m)
    expect(test.stdout).toMatch(
      /^attempt 1: succeeded {2}200 \{"received":true,"outcome":"processed"\}/m,
    )
    const deliveryId = /as delivery (\S+)/.exec(test.stdout)?.[1] as string

    const history = await run('deliveries', id, '--status', 'succeeded')
    expect(history.stdout).toMatch(
      /^DELIVERY\s+EVENT\s+TYPE\s+STATUS\s+ATTEMPTS\s+CREATED\s+ANSWER$/m,
    )
    expect(history.stdout).toContain(deliveryId)
    expect((await run('deliveries', id, '--status', 'lost')).stderr).toMatch(
      /--status must be one of pending, retrying, succeeded, failed/,
    )

    const replayed = await run('replay', id, deliveryId)
    expect(replayed.code).toBe(0)
    expect(replayed.stdout).toBe(`${deliveryId}: replay queued (eight fresh attempts)\n`)
  }, 30_000)

  it('test --wait against a failing receiver shows each attempt and exits 1 when it stops', async () => {
    const { run, h } = await setup()
    const publisher = await startPublisher(receivers)
    const { id, secret } = await createEndpoint(run, publisher.url)
    publisher.useSecret('whsec_not_the_one')
    expect(secret).toMatch(/^whsec_/)
    const following = run('test', id, '--wait', '--poll', '0.05s', '--timeout', '3s')
    await new Promise((resolve) => setTimeout(resolve, 300))
    await h.advance(2 * 60_000)
    const result = await following
    expect(result.code).toBe(1)
    expect(result.stdout).toMatch(
      /attempt \d: retrying {2}401 \{"error":\{"code":"signature_mismatch"/,
    )
  }, 30_000)
})

describe('replay --failed', () => {
  it('replays every delivery that failed for good, with a summary, and each is then handled once', async () => {
    const { run, h } = await setup()
    const publisher = await startPublisher(receivers)
    const { id, secret } = await createEndpoint(run, publisher.url)
    publisher.useSecret(secret)
    publisher.state.broken = true
    const events: string[] = []
    for (const n of [11, 12]) {
      events.push(
        (await h.call('POST', '/emulator/conversions', { body: conversion(n) })).body.data.event.id,
      )
    }
    // Eight attempts each, 16 failures in a row: failed for good, but not disabled.
    await h.advance(50 * HOUR)
    const failed = await run('deliveries', id, '--status', 'failed', '--json')
    expect(JSON.parse(failed.stdout)).toHaveLength(2)
    publisher.state.broken = false
    const replayed = await run('replay', id, '--failed')
    expect(replayed.code, replayed.stderr).toBe(0)
    expect(replayed.stdout).toBe('replayed 2 of 2\n')
    await h.advance(2 * 60_000)
    expect([...publisher.handled].sort()).toEqual([...events].sort())
    expect(
      JSON.parse((await run('deliveries', id, '--status', 'failed', '--json')).stdout),
    ).toEqual([])
    expect((await run('replay', id, '--failed', 'dlv_x')).code).toBe(2)
  }, 60_000)
})

describe('doctor and recover: "my endpoint got disabled"', () => {
  it('a receiver failing 20 times: doctor says why; recover re-enables, replays, names the lost window; every queued event is handled once', async () => {
    const { run, h } = await setup()
    const publisher = await startPublisher(receivers)
    const { id, secret } = await createEndpoint(run, publisher.url)
    publisher.useSecret(secret)
    publisher.state.broken = true

    const queued: string[] = []
    for (const n of [1, 2, 3]) {
      const emitted = await h.call('POST', '/emulator/conversions', { body: conversion(n) })
      queued.push(emitted.body.data.event.id)
    }
    // Three deliveries of eight attempts each: the 20th failure in a row disables the endpoint.
    await h.advance(50 * HOUR)
    const endpoint = JSON.parse((await run('endpoints', 'get', id, '--json')).stdout)
    expect(endpoint).toMatchObject({ status: 'disabled', disabledAt: expect.any(String) })
    // Events while disabled are not queued at all.
    const lost = await h.call('POST', '/emulator/conversions', { body: conversion(4) })
    expect(lost.body.data.deliveries).toEqual([])

    const doctor = await run('doctor', id)
    expect(doctor.code).toBe(1)
    expect(doctor.stdout).toMatch(/\[x\] disabled since /)
    expect(doctor.stdout).toMatch(/after 20 failed attempts in a row/)
    expect(doctor.stdout).toMatch(/500 handler_failed: your handler threw/)
    expect(doctor.stdout).toMatch(/fix: after fixing the cause below: affiliate-webhooks recover/)

    publisher.state.broken = false
    const recovered = await run('recover', id)
    expect(recovered.code, recovered.stderr).toBe(0)
    expect(recovered.stdout).toMatch(
      new RegExp(
        `^${id} re-enabled; the service had disabled it at ${endpoint.disabledAt} \\(the service's clock\\)$`,
        'm',
      ),
    )
    expect(recovered.stdout).toMatch(
      /^replayed 3 of 3 failed deliveries whose event was never acknowledged$/m,
    )
    expect(recovered.stdout).toMatch(
      /Not recoverable by replay: from \S+ \(the service's clock\) until this command re-enabled it,/,
    )
    expect(recovered.stdout).toMatch(/reconcile them from the service's conversion\nreports/)

    await h.advance(2 * 60_000)
    expect([...publisher.handled].sort()).toEqual([...queued].sort())
    const after = await run('doctor', id)
    expect(after.code).toBe(0)
    // Active again: the next conversion arrives by itself.
    const next = await h.call('POST', '/emulator/conversions', { body: conversion(5) })
    await h.advance(2 * 60_000)
    expect(publisher.handled).toContain(next.body.data.event.id)
    expect(new Set(publisher.handled).size).toBe(publisher.handled.length)
  }, 60_000)
})

describe('recover after an outage whose failures began before the streak', () => {
  it('replays every failed delivery never acknowledged, names the acknowledged one it left; doctor reads that one as the library answer it was', async () => {
    const { run, h } = await setup()
    const publisher = await startPublisher(receivers)
    const { id, secret } = await createEndpoint(run, publisher.url)
    publisher.useSecret(secret)
    const emit = async (n: number) => {
      const emitted = await h.call('POST', '/emulator/conversions', { body: conversion(n) })
      return emitted.body.data as { event: { id: string }; deliveries: { id: string }[] }
    }

    // Before the streak: one delivery fails all eight attempts (8 failures in a row)...
    publisher.state.broken = true
    const early = await emit(1)
    await h.advance(50 * HOUR)
    // ...then two succeed (the count goes back to 0)...
    publisher.state.broken = false
    const answered = await emit(2)
    const second = await emit(3)
    await h.advance(2 * 60_000)
    expect(publisher.handled).toHaveLength(2)
    // ...then the outage: three deliveries, the 20th failure in a row disables the endpoint.
    publisher.state.broken = true
    const outage = [await emit(4), await emit(5), await emit(6)]
    await h.advance(50 * HOUR)
    expect((await h.call('GET', `/v1/webhooks/${id}`)).body.data.status).toBe('disabled')
    // A delivery the receiver answered 200 processed, replayed while disabled: failed unsent.
    const answeredDelivery = answered.deliveries[0]?.id as string
    const replayed = await h.call(
      'POST',
      `/v1/webhooks/${id}/deliveries/${answeredDelivery}/replay`,
    )
    expect(replayed.status).toBe(202)
    await h.advance(2 * 60_000)
    const listed = (await h.call('GET', `/v1/webhooks/${id}/deliveries?status=failed&size=100`))
      .body.data as { id: string; responseStatus: number; responseBody: string }[]
    expect(listed.find((d) => d.id === answeredDelivery)).toMatchObject({
      responseStatus: 200,
      responseBody: '{"received":true,"outcome":"processed"}',
    })

    const doctor = await run('doctor', id)
    expect(doctor.stdout).not.toMatch(/200 without this library's error code/)
    expect(doctor.stdout).toMatch(
      /^\[ok\] 1 delivery failed unsent after the receiver had acknowledged its event$/m,
    )
    expect(doctor.stdout).toMatch(/The receiver answered 200 processed x 1 \(this library's answer/)
    expect(doctor.stdout).toMatch(/^\[!\] 1 delivery failed after all 8 attempts$/m)
    expect(doctor.stdout).toMatch(
      /^\[!\] 3 deliveries failed because the endpoint was disabled \(fewer than 8 attempts\)$/m,
    )

    publisher.state.broken = false
    const recovered = await run('recover', id)
    expect(recovered.code, recovered.stderr).toBe(0)
    expect(recovered.stdout).toMatch(
      /^replayed 4 of 4 failed deliveries whose event was never acknowledged$/m,
    )
    expect(recovered.stdout).toContain(
      [
        'left 1 of 5 failed deliveries:',
        `  ${answeredDelivery} (${answered.event.id}): its event was acknowledged: the receiver answered 200 processed; a later replay came due while the endpoint was disabled and was marked failed unsent`,
      ].join('\n'),
    )
    await h.advance(2 * 60_000)
    // Each event never acknowledged handled once; the acknowledged one not again.
    expect([...publisher.handled].sort()).toEqual(
      [answered, second, early, ...outage].map((e) => e.event.id).sort(),
    )
    const again = await run('recover', id, '--json')
    expect(JSON.parse(again.stdout)).toMatchObject({
      failedFound: 1,
      toReplay: 0,
      left: [
        {
          deliveryId: answeredDelivery,
          reason: 'acknowledged',
          acknowledgement: { by: 'answer', responseStatus: 200, outcome: 'processed' },
        },
      ],
    })
  }, 60_000)
})

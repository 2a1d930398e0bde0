/**
 * `deliveries --follow` against the emulator: the built CLI as a child process
 * listens to the emulator's event stream (`GET /emulator/webhooks/{id}/events`),
 * so each attempt and each disable and re-enable shows as a line within 2 s of
 * it, and no `/v1` call is made or counted for it; a dropped stream is opened
 * again with nothing lost; `--poll` polls as against the service.
 */
import type { IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { killLive, type Live, live } from '../support/cli-live.js'
import {
  answer,
  conversion,
  type Harness,
  type Receiver,
  startEmulator,
  startReceiver,
} from '../support/emulator-harness.js'

const KEY = `la_${'f'.repeat(32)}`
const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  killLive()
  await Promise.all(cleanups.splice(0).map((close) => close()))
})

/** Each stdout line of a child with the moment (performance.now()) it arrived here. */
function linesOf(follow: Live) {
  const lines: { at: number; text: string }[] = []
  let partial = ''
  follow.child.stdout.on('data', (text: string) => {
    const at = performance.now()
    const parts = (partial + text).split('\n')
    partial = parts.pop() ?? ''
    for (const part of parts) lines.push({ at, text: part })
  })
  return {
    lines,
    /** The first line matching `pattern`, waiting up to `timeoutMs`. */
    async next(pattern: RegExp, timeoutMs = 10_000) {
      const deadline = performance.now() + timeoutMs
      for (;;) {
        const line = lines.find((l) => pattern.test(l.text))
        if (line) return line
        if (follow.child.exitCode !== null || performance.now() > deadline) {
          throw new Error(
            `no ${pattern} in stdout:\n${follow.stdout()}\nstderr:\n${follow.stderr()}`,
          )
        }
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
    },
  }
}

async function stderrMatches(follow: Live, pattern: RegExp, timeoutMs = 15_000): Promise<void> {
  const deadline = performance.now() + timeoutMs
  while (!pattern.test(follow.stderr())) {
    if (follow.child.exitCode !== null || performance.now() > deadline) {
      throw new Error(`no ${pattern} in stderr:\n${follow.stderr()}\nstdout:\n${follow.stdout()}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** An emulator (time scale 1, each delivery sent when due) with a receiver on a real socket. */
async function setUp() {
  const h: Harness = await startEmulator({ apiKeys: [KEY] })
  const receiver: Receiver = await startReceiver(answer(500, '{"error":"crm_down"}'))
  cleanups.push(
    () => h.close(),
    () => receiver.close(),
  )
  const endpoint = await h.register(receiver.url)
  // When each attempt was made, by the engine (real time, this process's clock).
  const attempts: { at: number; attempt: number; ok: boolean }[] = []
  h.emulator.engine.watch((event) => {
    if (event.kind === 'attempt') {
      attempts.push({ at: performance.now(), attempt: event.entry.attempt, ok: event.entry.ok })
    }
  })
  const requests: string[] = []
  h.emulator.server.on('request', (req: IncomingMessage) => requests.push(req.url ?? ''))
  const env = { AFFILIATE_API_URL: h.base, AFFILIATE_API_KEY: KEY }
  return { h, receiver, endpoint, attempts, requests, env }
}

/** `X-Quota-Used` as `GET /v1/me` reports it: the account's calls counted before this one. */
async function quotaUsed(h: Harness): Promise<number> {
  return Number((await h.call('GET', '/v1/me')).headers.get('x-quota-used'))
}

async function waitFor<T>(read: () => T | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = performance.now() + timeoutMs
  for (;;) {
    const value = read()
    if (value !== undefined) return value
    if (performance.now() > deadline) throw new Error('timed out')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

describe('deliveries --follow on the emulator: its event stream', () => {
  it('a line within 2 s of each attempt and of a disable and re-enable; no /v1 call counted', async () => {
    const { h, receiver, endpoint, attempts, requests, env } = await setUp()
    const before = await quotaUsed(h)
    const from = requests.length
    const follow = live(['deliveries', endpoint.id, '--follow'], env)
    const out = linesOf(follow)
    await stderrMatches(
      follow,
      new RegExp(`^following ${endpoint.id} live: the emulator's event stream`, 'm'),
    )

    // Attempt 1 fails (500), the retry a minute later (the clock moved) succeeds.
    const emitted = await h.call('POST', '/emulator/conversions', { body: conversion(7001) })
    expect(emitted.status).toBe(200)
    const eventId: string = emitted.body.data.event.id
    const first = await waitFor(() => attempts.find((a) => a.attempt === 1))
    const line1 = await out.next(
      new RegExp(`${eventId}  conversion\\.created  attempt 1  500 \\(retrying\\)`),
    )
    receiver.use(answer(200))
    expect((await h.advance(60_000)).body.data.attempts).toBe(1)
    const second = await waitFor(() => attempts.find((a) => a.attempt === 2))
    const line2 = await out.next(
      new RegExp(`${eventId}  conversion\\.created  attempt 2  200 \\(succeeded\\)`),
    )

    const disabling = performance.now()
    await h.patch(endpoint.id, { status: 'disabled' })
    const off = await out.next(new RegExp(`${endpoint.id} disabled: deliveries stopped`))
    const enabling = performance.now()
    await h.patch(endpoint.id, { status: 'active' })
    const on = await out.next(new RegExp(`${endpoint.id} is active again`))

    const latency = {
      attempt1: line1.at - first.at,
      attempt2: line2.at - second.at,
      disable: off.at - disabling,
      enable: on.at - enabling,
    }
    console.info(`follow --live latency (ms): ${JSON.stringify(latency)}`)
    for (const ms of Object.values(latency)) {
      expect(ms).toBeGreaterThanOrEqual(0)
      expect(ms).toBeLessThan(2_000)
    }
    expect(out.lines.map((l) => l.text)).toHaveLength(4)

    // The follower asked the clock (no key, not counted) and opened the stream, nothing under /v1;
    // the quota grew by the test's own calls alone: two PATCHes and this GET /v1/me.
    const paths = requests.slice(from).map((url) => url.split('?')[0])
    expect(paths.filter((p) => p?.startsWith('/emulator/webhooks/'))).toEqual([
      `/emulator/webhooks/${endpoint.id}/events`,
    ])
    expect(paths.filter((p) => p?.startsWith('/v1/'))).toEqual([
      `/v1/webhooks/${endpoint.id}`,
      `/v1/webhooks/${endpoint.id}`,
    ])
    expect(await quotaUsed(h)).toBe(before + 1 + 2)
    expect(await follow.stop()).toBe(0)
    // Nothing secret went out: not the key, not the endpoint's signing secret.
    expect(follow.stdout() + follow.stderr()).not.toContain(KEY)
    expect(follow.stdout() + follow.stderr()).not.toContain(endpoint.secret)
  }, 60_000)

  it('a dropped stream is opened again and the attempt made meanwhile still shows', async () => {
    const { h, receiver, endpoint, requests, env } = await setUp()
    receiver.use(answer(200))
    const follow = live(['deliveries', endpoint.id, '--follow', '--json'], env)
    const out = linesOf(follow)
    await stderrMatches(follow, /live: the emulator's event stream/)
    // The stream (and every other connection) cut; an attempt made before it is back.
    h.emulator.server.closeAllConnections()
    const emitted = await h.call('POST', '/emulator/conversions', { body: conversion(7002) })
    const eventId: string = emitted.body.data.event.id
    const line = await out.next(new RegExp(`"eventId":"${eventId}"`), 10_000)
    expect(JSON.parse(line.text)).toMatchObject({
      type: 'attempt',
      endpointId: endpoint.id,
      eventId,
      attempt: 1,
      status: 'succeeded',
      responseStatus: 200,
    })
    await stderrMatches(follow, /^event stream dropped \(.+\); opening it again in 1 s$/m)
    expect(requests.filter((url) => url.includes('/events')).length).toBe(2)
    expect(out.lines).toHaveLength(1)
    expect(await follow.stop()).toBe(0)
  }, 30_000)

  it("a reconnect prints each missed attempt with its own state, not the delivery's current one", async () => {
    const { h, receiver, endpoint, attempts, env } = await setUp()
    receiver.use(answer(500, '{"error":{"code":"handler_failed","message":"CRM down"}}'))
    const follow = live(['deliveries', endpoint.id, '--follow'], env)
    const out = linesOf(follow)
    await stderrMatches(follow, /live: the emulator's event stream/)
    // The emulator stops listening: the follower cannot open the stream again until it is
    // back, and two attempts of one delivery are made meanwhile (through the engine itself).
    const { port } = h.emulator.server.address() as AddressInfo
    await new Promise<void>((resolve) => {
      h.emulator.server.close(() => resolve())
      h.emulator.server.closeAllConnections()
    })
    const { engine } = h.emulator
    const emitted = engine.emitConversion(
      conversion(7003) as Parameters<typeof engine.emitConversion>[0],
    )
    const eventId = emitted.event?.id as string
    await waitFor(() => attempts.find((a) => a.attempt === 1))
    receiver.use(answer(200, '{"received":true,"outcome":"processed"}'))
    expect((await engine.advance(60_000)).attempts).toBe(1)
    await stderrMatches(follow, /^event stream dropped \(.+\); opening it again in \d+ s$/m)
    await new Promise<void>((resolve) => h.emulator.server.listen(port, '127.0.0.1', resolve))

    const first = await out.next(
      new RegExp(`${eventId}  conversion\\.created  attempt 1  `),
      30_000,
    )
    expect(first.text).toMatch(/ {2}attempt 1 {2}500 handler_failed \(retrying\) {2}\d+ ms$/)
    const second = await out.next(new RegExp(`${eventId}  conversion\\.created  attempt 2  `))
    expect(second.text).toMatch(/ {2}attempt 2 {2}200 processed \(succeeded\) {2}\d+ ms$/)
    expect(out.lines).toHaveLength(2)
    expect(await follow.stop()).toBe(0)
  }, 60_000)

  it('an unknown endpoint: one line naming it, exit non-zero, no reconnecting', async () => {
    const { env } = await setUp()
    const follow = live(['deliveries', 'wh_nosuchendpoint', '--follow'], env)
    const code = await new Promise<number | null>((resolve) => follow.child.on('exit', resolve))
    expect(code).not.toBe(0)
    expect(follow.stderr()).toMatch(/404 webhook_not_found/)
    expect(follow.stderr()).not.toMatch(/opening it again/)
  }, 30_000)

  it('--poll polls as against the service: a look every batch interval, two /v1 calls a look', async () => {
    const { endpoint, requests, env } = await setUp()
    const from = requests.length
    const follow = live(['deliveries', endpoint.id, '--follow', '--poll'], env)
    await stderrMatches(
      follow,
      new RegExp(
        `^following ${endpoint.id}: a look every 60 s with jitter \\(the emulator's batch interval at time scale 1\\)`,
        'm',
      ),
    )
    expect(await follow.stop()).toBe(0)
    const paths = requests.slice(from).map((url) => url.split('?')[0])
    expect(paths).toEqual([
      '/emulator/clock',
      `/v1/webhooks/${endpoint.id}/deliveries`,
      `/v1/webhooks/${endpoint.id}`,
    ])
  }, 30_000)
})

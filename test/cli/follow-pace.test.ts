/**
 * `deliveries --follow` as a guest of the account: how many requests it makes
 * against the emulator at time scale 1 (`--poll`: as against the service, not
 * the emulator's event stream, which follow-live.test.ts covers), and what it does when the answers say
 * the rate limit is low or the monthly quota nearly used (a fake service on
 * loopback that answers with those headers). The CLI runs in-process.
 */
import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createClient } from '@affiliate-webhooks/client'
import { followDeliveries, SERVICE_PACE } from '@affiliate-webhooks/client/internal'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { main } from '../../packages/cli/src/main.js'
import { type Harness, startEmulator } from '../support/emulator-harness.js'

const KEY = `la_${'k'.repeat(32)}`
const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((close) => close()))
})

/** Runs the CLI in-process; `interrupt()` is Ctrl-C. */
function cli(args: string[], env: Record<string, string>) {
  let stdout = ''
  let stderr = ''
  const listeners = new Set<() => void>()
  const done = main(args, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    stdin: (async function* () {})(),
    env,
    onInterrupt(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
  })
  return {
    done,
    stdout: () => stdout,
    stderr: () => stderr,
    interrupt: () => {
      for (const listener of [...listeners]) listener()
    },
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('deliveries --follow --poll against the emulator at time scale 1', () => {
  it('makes at most 3 requests in any minute over two minutes, and says what it costs', async () => {
    const h: Harness = await startEmulator({ apiKeys: [KEY], batchIntervalMs: 60_000 })
    cleanups.push(() => h.close())
    const endpoint = await h.register('http://127.0.0.1:9/hooks')
    const requests: { at: number; path: string }[] = []
    h.emulator.server.on('request', (req: IncomingMessage) => {
      requests.push({ at: performance.now(), path: req.url ?? '' })
    })
    const started = performance.now()
    const follow = cli(['deliveries', endpoint.id, '--follow', '--poll'], {
      AFFILIATE_API_URL: h.base,
      AFFILIATE_API_KEY: KEY,
    })
    // Until the second look after the baseline (each look is two calls): two minutes or more.
    await vi.waitFor(() => expect(requests.length).toBeGreaterThanOrEqual(7), {
      timeout: 170_000,
      interval: 1000,
    })
    follow.interrupt()
    expect(await follow.done).toBe(0)
    expect(follow.stderr()).toContain(
      `following ${endpoint.id}: a look every 60 s with jitter (the emulator's batch interval at time scale 1), 2 calls a look: about 2,880 calls a day of emulator time, 1.2 % of the monthly quota of 250,000`,
    )
    const times = requests.map((r) => r.at - started)
    // Any window of one minute holds at most three requests.
    for (const from of times) {
      expect(times.filter((t) => t >= from && t < from + 60_000).length).toBeLessThanOrEqual(3)
    }
    // The probe of the pace, the baseline, and one look a minute: not a request a second.
    const look = [`/v1/webhooks/${endpoint.id}/deliveries`, `/v1/webhooks/${endpoint.id}`]
    expect(requests.map((r) => r.path.split('?')[0])).toEqual([
      '/emulator/clock',
      ...look,
      ...look,
      ...look,
    ])
    // A minute or more between the starts of the looks.
    const [baseline, first, second] = [1, 3, 5].map((i) => requests[i]?.at as number) as [
      number,
      number,
      number,
    ]
    expect(first - baseline).toBeGreaterThanOrEqual(60_000)
    expect(second - first).toBeGreaterThanOrEqual(60_000)
  }, 200_000)
})

/** A fake service: an endpoint with no deliveries, answers carrying the headers `headers()` gives. */
async function fakeService(headers: () => Record<string, string>) {
  const paths: { at: number; path: string }[] = []
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '').split('?')[0] as string
    paths.push({ at: performance.now(), path })
    const send = (status: number, body: unknown, extra: Record<string, string> = {}) =>
      res
        .writeHead(status, { 'content-type': 'application/json', ...extra })
        .end(JSON.stringify(body))
    if (path === '/emulator/clock') {
      send(404, { success: false, message: 'No route.', error: { code: 'route_not_found' } })
    } else if (path.endsWith('/deliveries')) {
      send(200, { success: true, message: 'ok', data: [] }, headers())
    } else {
      const data = { id: 'wh_1', url: 'https://x.example.com/', events: [], status: 'active' }
      send(200, { success: true, message: 'ok', data }, headers())
    }
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  cleanups.push(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, paths }
}

describe('deliveries --follow when the account runs low', () => {
  it('a quota near its end: the plan, then one line saying why it stopped, exit 1', async () => {
    const service = await fakeService(() => ({
      'X-RateLimit-Limit': '120',
      'X-RateLimit-Remaining': '100',
      'X-RateLimit-Reset': String(Math.ceil(Date.now() / 60_000) * 60),
      'X-Quota-Used': '247600',
      'X-Quota-Limit': '250000',
    }))
    const follow = cli(['deliveries', 'wh_1', '--follow'], {
      AFFILIATE_API_URL: service.url,
      AFFILIATE_API_KEY: KEY,
    })
    expect(await follow.done).toBe(1)
    const lines = follow.stderr().trim().split('\n')
    expect(lines[0]).toMatch(
      /^following wh_1: a look every 60 s with jitter \(the service's batch interval\)/,
    )
    expect(lines.slice(1)).toEqual([
      'stopped: the account has used 247,601 of its 250,000 calls this month; following further would leave less than 2,500 for its other work (the quota resets on the 1st, UTC)',
    ])
    // The probe, then the two calls of the baseline: nothing after the stop.
    expect(service.paths.map((p) => p.path)).toEqual([
      '/emulator/clock',
      '/v1/webhooks/wh_1/deliveries',
      '/v1/webhooks/wh_1',
    ])
  })

  it('a 429 quota_exceeded: one line, exit 1', async () => {
    const server = createServer((_req, res) =>
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '86400' }).end(
        JSON.stringify({
          success: false,
          message: 'Monthly quota used up.',
          error: { code: 'quota_exceeded' },
        }),
      ),
    )
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    cleanups.push(async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    })
    const follow = cli(['deliveries', 'wh_1', '--follow'], {
      AFFILIATE_API_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      AFFILIATE_API_KEY: KEY,
    })
    expect(await follow.done).toBe(1)
    expect(follow.stderr().trim()).toBe(
      'stopped: the monthly quota is used up (429 quota_exceeded); every call of the account is refused until the 1st (UTC)',
    )
  })

  it('a low X-RateLimit-Remaining: it backs off until the window clears, and resumes its pace after', async () => {
    let remaining = 5
    const resetAt = Date.now() + 2_000
    const service = await fakeService(() => ({
      'X-RateLimit-Limit': '120',
      'X-RateLimit-Remaining': String(remaining),
      'X-RateLimit-Reset': String(Math.ceil(resetAt / 1000)),
      Date: new Date().toUTCString(),
      'X-Quota-Used': '10',
      'X-Quota-Limit': '250000',
    }))
    const api = createClient({ apiKey: KEY, baseUrl: service.url })
    const controller = new AbortController()
    const events: { type: string; at: number; delayMs?: number }[] = []
    const following = (async () => {
      try {
        for await (const event of followDeliveries(api, 'wh_1', {
          signal: controller.signal,
          pace: SERVICE_PACE,
          intervalMs: 200,
        })) {
          events.push({
            type: event.type,
            at: performance.now(),
            ...('delayMs' in event ? { delayMs: event.delayMs } : {}),
          })
          // Once the back-off was announced, the rest of the account is quiet again.
          if (event.type === 'backoff') remaining = 100
        }
      } catch (error) {
        if (!controller.signal.aborted) throw error
      }
    })()
    await sleep(4_000)
    controller.abort()
    await following
    expect(events[0]?.type).toBe('plan')
    const backoff = events.find((e) => e.type === 'backoff')
    // Not the 200 ms interval: at least until the window clears (about 2 s).
    expect(backoff?.delayMs).toBeGreaterThanOrEqual(1_000)
    const looks = service.paths.filter((p) => p.path.endsWith('/deliveries')).map((p) => p.at)
    const afterBackoff = looks.filter((t) => t > (backoff?.at ?? 0))
    expect((afterBackoff[0] ?? 0) - (backoff?.at ?? 0)).toBeGreaterThanOrEqual(950)
    // Then the normal pace again: looks about 200-220 ms apart.
    expect(afterBackoff.length).toBeGreaterThanOrEqual(3)
    expect(events.filter((e) => e.type === 'backoff')).toHaveLength(1)
  }, 15_000)
})

/**
 * @affiliate-webhooks/client against the emulator over real HTTP: every method,
 * the error codes a client can meet, 429 waited out, quota_exceeded not, and
 * pacing: 300 replays at 120 calls a minute never meet a 429.
 */
import {
  createClient,
  type Delivery,
  isServiceError,
  type ServiceError,
} from '@affiliate-webhooks/client'
import { type Clock, createClock } from '@affiliate-webhooks/emulator'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  conversion,
  type Harness,
  type Receiver,
  startEmulator,
  startReceiver,
} from '../support/emulator-harness.js'

const KEY = `la_${'c'.repeat(32)}`
const READ_ONLY = `la_${'o'.repeat(32)}`
const START = Date.UTC(2026, 0, 5, 10, 0, 0)

let receiver: Receiver
/** While set, the receiver answers no delivery until it resolves (a delivery held in flight). */
let hold: Promise<void> | undefined
beforeAll(async () => {
  receiver = await startReceiver(async (_req, res) => {
    await hold
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end('{"received":true,"outcome":"processed"}')
  })
})
afterAll(() => receiver.close())

const harnesses: Harness[] = []
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.close()))
})
async function start(options: Parameters<typeof startEmulator>[0] = {}) {
  const h = await startEmulator({
    apiKeys: [KEY, `${READ_ONLY}:webhooks:read`],
    clock: createClock({ start: START }),
    ...options,
  })
  harnesses.push(h)
  return h
}
const clientOf = (h: Harness, apiKey = KEY, fetcher?: typeof fetch) =>
  createClient({
    apiKey,
    baseUrl: h.base,
    retry: { baseDelayMs: 5, maxDelayMs: 20 },
    ...(fetcher ? { fetch: fetcher } : {}),
  })

/** A fetch that records what each call got and when it went out and came back (real ms). */
function counting(onAnswer: (status: number) => void = () => {}) {
  const seen = {
    statuses: [] as number[],
    codes: [] as (string | undefined)[],
    retryAfter: [] as (string | null)[],
    sentAt: [] as number[],
    answeredAt: [] as number[],
    fetch: (async (input, init) => {
      seen.sentAt.push(performance.now())
      const response = await fetch(input, init)
      const body = (await response.clone().json()) as { error?: { code?: string } }
      seen.answeredAt.push(performance.now())
      seen.statuses.push(response.status)
      seen.codes.push(body.error?.code)
      seen.retryAfter.push(response.headers.get('retry-after'))
      onAnswer(response.status)
      return response
    }) as typeof fetch,
  }
  return seen
}

/** Service time that moves only when the test moves it; `timeScale` sets the real length of Retry-After. */
function frozenClock(start: number, timeScale: number): Clock {
  let now = start
  return {
    now: () => now,
    timeScale,
    advance(ms) {
      if (ms > 0) now += ms
    },
    advanceTo(at) {
      now = Math.max(now, at)
    },
    realDelay: (at) => Math.max(0, (at - now) / timeScale),
  }
}
const caught = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected a rejection')
    },
    (error: unknown) => {
      expect(isServiceError(error)).toBe(true)
      return error as ServiceError
    },
  )

describe('client against the emulator: every method', () => {
  it('health, me, create, list, get, update, enable/disable, rotate, test, deliveries, replay, delete', async () => {
    const h = await start()
    const api = clientOf(h)
    expect(await api.health()).toEqual({ status: 'ok' })
    expect(await api.me()).toMatchObject({ callerIp: expect.any(String) })

    const made = await api.webhooks.create({
      url: receiver.url,
      events: ['conversion.created'],
      description: 'main',
    })
    expect(made).toMatchObject({
      url: receiver.url,
      status: 'active',
      description: 'main',
      consecutiveFailures: 0,
    })
    expect(made.secret).toMatch(/^whsec_/)
    // Fields the types do not name are kept.
    expect(made.createdAt).toEqual(expect.any(String))
    expect((await api.webhooks.list()).map((e) => e.id)).toEqual([made.id])
    const got = await api.webhooks.get(made.id)
    expect(got).not.toHaveProperty('secret')

    expect(
      await api.webhooks.update(made.id, {
        description: null,
        events: ['conversion.created', 'conversion.updated'],
      }),
    ).toMatchObject({
      description: null,
      events: ['conversion.created', 'conversion.updated'],
    })
    expect((await api.webhooks.update(made.id, { status: 'disabled' })).status).toBe('disabled')
    expect((await api.webhooks.update(made.id, { status: 'active' })).status).toBe('active')

    const rotated = await api.webhooks.rotateSecret(made.id)
    expect(rotated.secret).toMatch(/^whsec_/)
    expect(rotated.secret).not.toBe(made.secret)

    const test = await api.webhooks.sendTest(made.id)
    expect(test).toMatchObject({
      eventId: expect.stringMatching(/^evt_/),
      deliveryId: expect.any(String),
    })
    await h.call('POST', '/emulator/conversions', { body: conversion(1) })
    await h.advance(120_000)
    const all = []
    for await (const delivery of api.webhooks.deliveries(made.id)) all.push(delivery)
    expect(all.map((d) => d.eventType).sort()).toEqual(['conversion.created', 'webhook.test'])
    expect(all.every((d) => d.status === 'succeeded' && d.responseStatus === 200)).toBe(true)
    const succeeded = []
    for await (const delivery of api.webhooks.deliveries(made.id, { status: 'succeeded', size: 1 }))
      succeeded.push(delivery.id)
    expect(succeeded.sort()).toEqual(all.map((d) => d.id).sort())

    // The receiver holds the replayed attempt, so the delivery is still queued for the second replay.
    let release = () => {}
    hold = new Promise((resolve) => {
      release = resolve
    })
    expect(await api.webhooks.replay(made.id, test.deliveryId)).toMatchObject({
      outcome: 'accepted',
    })
    // Now pending again: a second replay is refused, and that is an error on a first try.
    expect(await caught(api.webhooks.replay(made.id, test.deliveryId))).toMatchObject({
      status: 409,
      code: 'delivery_not_replayable',
    })
    hold = undefined
    release()

    await api.webhooks.delete(made.id)
    expect(await api.webhooks.list()).toEqual([])
  })
})

describe('client against the emulator: errors', () => {
  it('every code a client can meet, typed, with its extra fields', async () => {
    const h = await start()
    const api = clientOf(h)
    expect(await caught(clientOf(h, `la_${'x'.repeat(32)}`).webhooks.list())).toMatchObject({
      status: 401,
      code: 'invalid_api_key',
    })
    const scope = await caught(
      clientOf(h, READ_ONLY).webhooks.create({ url: receiver.url, events: ['conversion.created'] }),
    )
    expect(scope).toMatchObject({
      status: 403,
      code: 'insufficient_scope',
      required: 'webhooks:write',
    })
    expect(scope.granted).toContain('webhooks:read')
    expect(await caught(api.webhooks.get('we_missing'))).toMatchObject({
      status: 404,
      code: 'webhook_not_found',
    })
    const invalid = await caught(api.webhooks.create({ url: 'not a url', events: [] }))
    expect(invalid).toMatchObject({ status: 400, code: 'validation_failed' })
    expect(invalid.fields?.map((f) => f.field).sort()).toEqual(['events', 'url'])
    const made = await api.webhooks.create({ url: receiver.url, events: ['conversion.created'] })
    expect(await caught(api.webhooks.replay(made.id, 'dl_missing'))).toMatchObject({
      status: 404,
      code: 'delivery_not_found',
    })
    for (let i = 0; i < 4; i++)
      await api.webhooks.create({ url: receiver.url, events: ['conversion.created'] })
    expect(
      await caught(api.webhooks.create({ url: receiver.url, events: ['conversion.created'] })),
    ).toMatchObject({
      status: 409,
      code: 'webhook_limit_reached',
    })
    const strict = clientOf(await start({ strict: true }))
    expect(
      await caught(
        strict.webhooks.create({
          url: 'https://127.0.0.1:8443/hooks',
          events: ['conversion.created'],
        }),
      ),
    ).toMatchObject({
      status: 422,
      code: 'url_not_allowed',
    })
  })

  it('paces under the window: ten calls at three a (100 ms) window meet no 429', async () => {
    const limited = await start({
      clock: createClock({ start: START, timeScale: 600 }),
      rateLimit: 3,
    })
    const seen = counting()
    const api = clientOf(limited, KEY, seen.fetch)
    for (let i = 0; i < 10; i++) expect(await api.webhooks.list()).toEqual([])
    expect(seen.statuses).toEqual(Array(10).fill(200))
  })

  it('meets a real 429 rate_limited, waits out its Retry-After, then succeeds; fails at once on quota_exceeded', async () => {
    // Service time stands still unless the test moves it, so the window cannot end on its own.
    const clock = frozenClock(START, 60)
    const limited = await start({ clock, rateLimit: 3 })
    // Another caller of the same account uses up the window; this client's pacer cannot know.
    for (let i = 0; i < 3; i++) expect((await limited.call('GET', '/v1/webhooks')).status).toBe(200)
    const seen = counting((status) => {
      // The 429 has been answered: the next minute begins, so the retry can pass.
      if (status === 429) clock.advance(60_000)
    })
    const api = clientOf(limited, KEY, seen.fetch)
    expect(await api.webhooks.list()).toEqual([])
    expect(seen.statuses).toEqual([429, 200])
    expect(seen.codes[0]).toBe('rate_limited')
    const retryAfterMs = Number(seen.retryAfter[0]) * 1000
    expect(retryAfterMs).toBe(1000) // a service minute at time scale 60 is one real second
    // The retry went out no sooner than Retry-After said (a lower bound: load only adds to it).
    expect((seen.sentAt[1] as number) - (seen.answeredAt[0] as number)).toBeGreaterThanOrEqual(
      retryAfterMs - 5,
    )

    const exhausted = clientOf(await start({ monthlyQuota: 2 }))
    await exhausted.webhooks.list()
    await exhausted.webhooks.list()
    const quota = await caught(exhausted.webhooks.list())
    expect(quota).toMatchObject({ status: 429, code: 'quota_exceeded' })
    expect(quota.message).toMatch(/not waited out/)
  })
})

describe('client against the emulator: pacing', () => {
  it('300 replays at 120 calls a minute: no 429, no window over 120', async () => {
    // Service time 60x real: a rate-limit minute lasts one real second.
    const h = await start({ clock: createClock({ timeScale: 60 }) })
    const calls: { status: number; reset: string | null }[] = []
    const counting: typeof fetch = async (input, init) => {
      const response = await fetch(input, init)
      calls.push({ status: response.status, reset: response.headers.get('x-ratelimit-reset') })
      return response
    }
    const api = createClient({ apiKey: KEY, baseUrl: h.base, fetch: counting })
    const endpoint = await api.webhooks.create({
      url: receiver.url,
      events: ['conversion.created'],
    })
    for (let id = 1; id <= 300; id++)
      await h.call('POST', '/emulator/conversions', { body: conversion(id) })
    await h.advance(120_000)
    const succeeded: Delivery[] = []
    for await (const delivery of api.webhooks.deliveries(endpoint.id, { status: 'succeeded' })) {
      succeeded.push(delivery)
    }
    expect(succeeded).toHaveLength(300)
    calls.length = 0
    const results = await Promise.all(
      [0, 1, 2, 3].map(async (lane) => {
        const outcomes = []
        for (let i = lane; i < succeeded.length; i += 4) {
          outcomes.push(
            (await api.webhooks.replay(endpoint.id, succeeded[i]?.id as string)).outcome,
          )
        }
        return outcomes
      }),
    )
    expect(results.flat().filter((o) => o === 'accepted')).toHaveLength(300)
    expect(calls.filter((c) => c.status === 429)).toEqual([])
    const perWindow = new Map<string, number>()
    for (const call of calls)
      perWindow.set(String(call.reset), (perWindow.get(String(call.reset)) ?? 0) + 1)
    expect(Math.max(...perWindow.values())).toBeLessThanOrEqual(120)
    expect(perWindow.size).toBeGreaterThanOrEqual(3)
  }, 60_000)
})

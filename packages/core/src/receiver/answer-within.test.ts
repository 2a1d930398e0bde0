import { describe, expect, it, vi } from 'vitest'
import type { EventStore } from '../store/event-store.js'
import { memoryStore } from '../store/memory-store.js'
import { buildConversionEvent, buildTestEvent, signedDelivery } from '../testing/index.js'
import { createReceiver } from './create-receiver.js'

const SECRET = 'whsec_answer_within_test'
// After every createdAt the tests stamp (now, or fixed 2026 dates): an event is never signed before it was created.
const NOW = 2_000_000_000
const now = () => NOW * 1000

async function input(event: object) {
  const signed = await signedDelivery({ secret: SECRET, event, timestamp: NOW, attempt: 1 })
  return { headers: signed.headers, rawBody: new TextEncoder().encode(signed.body) }
}

const deferred = () => {
  let resolve!: () => void
  let reject!: (error: Error) => void
  const promise = new Promise<void>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

function logger() {
  const lines: string[] = []
  return {
    lines,
    warn: (line: string) => void lines.push(`warn ${line}`),
    error: (line: string) => void lines.push(`error ${line}`),
  }
}

describe('createReceiver({ answerWithinMs })', () => {
  it('answers a handler still running 503 handler_timeout, keeps its lease past leaseMs (copies 409), then marks it handled (duplicate)', async () => {
    const gate = deferred()
    const log = logger()
    const onConversion = vi.fn(() => gate.promise)
    const receiver = createReceiver({
      secret: SECRET,
      now,
      onConversion,
      answerWithinMs: 200,
      leaseMs: 300,
      logger: log,
    })
    const event = buildConversionEvent()
    const started = performance.now()
    const first = await receiver.receive(await input(event))
    const took = performance.now() - started
    expect(first).toMatchObject({
      status: 503,
      outcome: 'failed',
      error: { code: 'handler_timeout' },
    })
    expect(took).toBeGreaterThanOrEqual(190)
    expect(took).toBeLessThan(2_000)
    // One line, an error (the app's handler, not the client), saying how long it ran.
    expect(log.lines).toHaveLength(1)
    expect(log.lines[0]).toMatch(
      /^error affiliate-webhooks: 503 handler_timeout evt_\w+ .*has run 0\.\d s/,
    )
    // Past the 300 ms lease: renewed, so a copy still gets 409, never a second run.
    await new Promise((r) => setTimeout(r, 700))
    const copy = await receiver.receive(await input(event))
    expect(copy).toMatchObject({ status: 409, error: { code: 'event_in_progress' } })
    expect(onConversion).toHaveBeenCalledTimes(1)
    gate.resolve()
    await vi.waitFor(async () => {
      expect(await receiver.receive(await input(event))).toMatchObject({
        status: 200,
        outcome: 'duplicate',
      })
    })
    expect(onConversion).toHaveBeenCalledTimes(1)
    expect(log.lines.filter((line) => /handler_timeout/.test(line))).toHaveLength(1)
  })

  it('answers in time a handler that settles in time, with no timer left behind', async () => {
    const receiver = createReceiver({
      secret: SECRET,
      now,
      onConversion: () => new Promise((r) => setTimeout(r, 20)),
      answerWithinMs: 500,
      logger: false,
    })
    expect(await receiver.receive(await input(buildConversionEvent()))).toMatchObject({
      status: 200,
      outcome: 'processed',
    })
  })

  it('counts from the request start the adapter passes: time the body took is spent', async () => {
    const receiver = createReceiver({
      secret: SECRET,
      now,
      onConversion: () => new Promise(() => {}),
      answerWithinMs: 400,
      logger: false,
    })
    const started = performance.now()
    const result = await receiver.receive({
      ...(await input(buildConversionEvent())),
      startedAt: Date.now() - 300,
    })
    expect(result.status).toBe(503)
    expect(performance.now() - started).toBeLessThan(300)
  })

  it('bounds the answer by half a short lease when answerWithinMs is not given', async () => {
    const receiver = createReceiver({
      secret: SECRET,
      now,
      onConversion: () => new Promise(() => {}),
      leaseMs: 300,
      logger: false,
    })
    const started = performance.now()
    expect((await receiver.receive(await input(buildConversionEvent()))).status).toBe(503)
    const took = performance.now() - started
    expect(took).toBeGreaterThanOrEqual(140)
    expect(took).toBeLessThan(290)
  })

  it('releases a handler that throws after its answer, logging that once as a warning', async () => {
    const gate = deferred()
    const log = logger()
    const onConversion = vi.fn().mockReturnValueOnce(gate.promise).mockReturnValue(undefined)
    const receiver = createReceiver({
      secret: SECRET,
      now,
      onConversion,
      answerWithinMs: 100,
      logger: log,
    })
    const event = buildConversionEvent()
    expect((await receiver.receive(await input(event))).status).toBe(503)
    gate.reject(new Error('late failure'))
    await vi.waitFor(() => expect(log.lines).toHaveLength(2))
    expect(log.lines[1]).toMatch(
      /^warn .*500 handler_failed after \d+\.\d s, after its delivery was answered 503 handler_timeout/,
    )
    // Released: the retry runs it again.
    expect((await receiver.receive(await input(event))).outcome).toBe('processed')
    expect(onConversion).toHaveBeenCalledTimes(2)
  })

  it('leaves a store without extend (the SQL stores) to its own bound: no renewal attempted', async () => {
    const base = memoryStore()
    const store: EventStore = {
      begin: (i) => base.begin(i),
      commit: (c) => base.commit(c),
      release: (c) => base.release(c),
    }
    const gate = deferred()
    const receiver = createReceiver({
      secret: SECRET,
      now,
      store,
      onConversion: () => gate.promise,
      answerWithinMs: 50,
      logger: false,
    })
    expect((await receiver.receive(await input(buildConversionEvent()))).status).toBe(503)
    gate.resolve()
  })

  /** The memory store, whose renewals fail as `extend` says (called with the renewal's number). */
  function flakyRenewals(
    extend: (n: number, go: () => boolean) => Promise<boolean>,
    base = memoryStore(),
  ) {
    let n = 0
    const store: EventStore = {
      begin: (i) => base.begin(i),
      commit: (c) => base.commit(c),
      release: (c) => base.release(c),
      extend: (c, ms) => extend(++n, () => base.extend?.(c, ms) as boolean),
    }
    return { store, renewals: () => n }
  }

  /** A handler past its 600 ms lease; a copy at 1.1 s; the handler ends at 1.5 s. */
  async function copyDuringLongHandler(store: EventStore, log = logger()) {
    const gate = deferred()
    const onConversion = vi.fn(() => gate.promise)
    const receiver = createReceiver({
      secret: SECRET,
      now,
      store,
      onConversion,
      answerWithinMs: 100,
      leaseMs: 600,
      logger: log,
    })
    const event = buildConversionEvent()
    expect((await receiver.receive(await input(event))).error?.code).toBe('handler_timeout')
    await new Promise((r) => setTimeout(r, 1_000))
    const copy = await receiver.receive(await input(event))
    setTimeout(gate.resolve, 400)
    await vi.waitFor(async () => {
      expect((await receiver.receive(await input(event))).outcome).toBe('duplicate')
    })
    return { copy, calls: onConversion.mock.calls.length, log }
  }

  it('tries a failed renewal again within the lease: a copy still gets 409, never a second run', async () => {
    const { store, renewals } = flakyRenewals(async (n, go) => {
      if (n === 1) throw new Error('the store did not answer')
      return go()
    })
    const { copy, calls, log } = await copyDuringLongHandler(store)
    expect(copy).toMatchObject({ status: 409, error: { code: 'event_in_progress' } })
    expect(calls).toBe(1)
    expect(renewals()).toBeGreaterThanOrEqual(3)
    expect(log.lines.filter((line) => /lease could not be renewed/.test(line))).toEqual([])
  })

  it("keeps the store's own lease when the receiver names none: a store with leaseMs 600 and one failed renewal still answers a copy 409", async () => {
    const { store } = flakyRenewals(
      async (n, go) => {
        if (n === 1) throw new Error('the store did not answer')
        return go()
      },
      memoryStore({ leaseMs: 600 }),
    )
    const gate = deferred()
    const onConversion = vi.fn(() => gate.promise)
    const receiver = createReceiver({
      secret: SECRET,
      now,
      store,
      onConversion,
      answerWithinMs: 100,
      logger: false,
    })
    const event = buildConversionEvent()
    expect((await receiver.receive(await input(event))).error?.code).toBe('handler_timeout')
    await new Promise((r) => setTimeout(r, 1_000))
    expect((await receiver.receive(await input(event))).status).toBe(409)
    expect(onConversion).toHaveBeenCalledTimes(1)
    gate.resolve()
  })

  it('tries a renewal that hangs again after a tenth of the lease', async () => {
    const { store } = flakyRenewals((n, go) =>
      n === 1 ? new Promise<boolean>(() => {}) : Promise.resolve(go()),
    )
    const { copy, calls } = await copyDuringLongHandler(store)
    expect(copy.status).toBe(409)
    expect(calls).toBe(1)
  })

  it('says once, as a warning, when the lease could not be kept; the copy then runs', async () => {
    const { store, renewals } = flakyRenewals(async () => {
      throw new Error('the store did not answer')
    })
    const { copy, calls, log } = await copyDuringLongHandler(store)
    // The lease ran out with no renewal through: the copy is the service's retry, and
    // runs (its handler waits on the same gate, so it too is answered handler_timeout).
    expect(copy.error?.code).toBe('handler_timeout')
    expect(calls).toBe(2)
    const lost = log.lines.filter((line) => /lease could not be renewed/.test(line))
    expect(lost).toHaveLength(1)
    expect(lost[0]).toMatch(/^warn affiliate-webhooks: evt_\w+ \(conversion\.created\)/)
    // Tried every tenth of the lease until it ran out, then no more.
    const tried = renewals()
    expect(tried).toBeGreaterThanOrEqual(4)
    await new Promise((r) => setTimeout(r, 200))
    expect(renewals()).toBe(tried)
  })

  it('has defaults inside the service’s 10 s, and refuses bounds that cannot hold', () => {
    const receiver = createReceiver({ secret: SECRET, onConversion: () => {}, logger: false })
    expect(receiver.bodyTimeoutMs).toBe(5_000)
    const make = (options: object) => () =>
      createReceiver({ secret: SECRET, onConversion: () => {}, logger: false, ...options })
    expect(make({ answerWithinMs: 0 })).toThrow(/answerWithinMs.*whole number/)
    expect(make({ bodyTimeoutMs: 1.5 })).toThrow(/bodyTimeoutMs.*whole number/)
    expect(make({ leaseMs: 8_000, answerWithinMs: 8_000 })).toThrow(
      /leaseMs.*must be longer than.*answerWithinMs/,
    )
    expect(make({ leaseMs: 8_001, answerWithinMs: 8_000 })).not.toThrow()
    // A short lease alone halves the bound, rather than refusing to start.
    expect(make({ leaseMs: 300 })).not.toThrow()
  })
})

describe('an event from the future (step 5)', () => {
  const future = (seconds: number) => new Date((NOW + seconds) * 1000).toISOString()

  it('refuses a conversion event created after t + tolerance 400 invalid_payload, before the store', async () => {
    const base = memoryStore()
    const begin = vi.fn((i: Parameters<typeof base.begin>[0]) => base.begin(i))
    const onConversion = vi.fn()
    const receiver = createReceiver({
      secret: SECRET,
      now,
      onConversion,
      store: { ...base, begin } as EventStore,
      logger: false,
    })
    const event = buildConversionEvent({ createdAt: '2099-01-01T00:00:00.000Z' })
    const result = await receiver.receive(await input(event))
    expect(result).toMatchObject({ status: 400, error: { code: 'invalid_payload' } })
    expect(JSON.parse(result.body).error.message).toMatch(/createdAt is \d+ s after its signature/)
    expect(begin).not.toHaveBeenCalled()
    expect(onConversion).not.toHaveBeenCalled()
    // A later honest event of the same conversion is not stale.
    const honest = buildConversionEvent({ createdAt: future(-10) })
    expect((await receiver.receive(await input(honest))).outcome).toBe('processed')
  })

  it('accepts createdAt up to t + tolerance, and refuses a microsecond more', async () => {
    const receiver = createReceiver({ secret: SECRET, now, onConversion: () => {}, logger: false })
    const edge = buildConversionEvent({ createdAt: future(300) })
    expect((await receiver.receive(await input(edge))).outcome).toBe('processed')
    const past = buildConversionEvent({
      createdAt: new Date((NOW + 300) * 1000).toISOString().replace('Z', '001Z'),
    })
    expect((await receiver.receive(await input(past))).status).toBe(400)
  })

  it('leaves events without a conversion (webhook.test) alone: nothing they set is a watermark', async () => {
    const receiver = createReceiver({
      secret: SECRET,
      now,
      on: { 'webhook.test': () => {} },
      logger: false,
    })
    const test = buildTestEvent({ createdAt: '2099-01-01T00:00:00.000Z' })
    expect((await receiver.receive(await input(test))).outcome).toBe('processed')
  })
})

import { runInNewContext } from 'node:vm'
import { describe, expect, it, vi } from 'vitest'
import type { Conversion } from '../events/event-types.js'
import type { EventStore } from '../store/event-store.js'
import { memoryStore } from '../store/memory-store.js'
import { buildConversionEvent, buildTestEvent, signedDelivery } from '../testing/index.js'
import { createReceiver } from './create-receiver.js'
import type { ReceiverOptions } from './receiver-types.js'

const SECRET = 'whsec_receiver_test_secret'
// After every createdAt the tests stamp (now, or fixed 2026 dates): an event is never signed before it was created.
const NOW = 2_000_000_000
const now = () => NOW * 1000

async function input(
  event: object | string,
  options: { timestamp?: number; attempt?: number } = {},
) {
  const signed = await signedDelivery({
    secret: SECRET,
    event,
    timestamp: options.timestamp ?? NOW,
    attempt: options.attempt ?? 1,
  })
  return { headers: signed.headers, rawBody: new TextEncoder().encode(signed.body) }
}

function receiverWith(options: Partial<ReceiverOptions> = {}) {
  const seen: Conversion[] = []
  const onConversion = vi.fn((conversion: Conversion) => {
    seen.push(conversion)
  })
  const receiver = createReceiver({ secret: SECRET, now, onConversion, ...options })
  return { receiver, onConversion, seen }
}

const deferred = () => {
  let resolve!: () => void
  const promise = new Promise<void>((r) => {
    resolve = r
  })
  return { promise, resolve }
}

const at = (second: number) => new Date((NOW - 3600 + second) * 1000).toISOString()

describe('createReceiver().receive', () => {
  it('answers 200 processed and calls onConversion with the conversion, event and ctx', async () => {
    const { receiver, onConversion } = receiverWith()
    const event = buildConversionEvent({ conversion: { id: 5, status: 'approved' } })
    const result = await receiver.receive(await input(event, { attempt: 3 }))
    expect(result).toMatchObject({ status: 200, outcome: 'processed', event })
    expect(JSON.parse(result.body)).toEqual({ received: true, outcome: 'processed' })
    expect(result.headers['content-type']).toMatch(/^application\/json/)
    expect(onConversion).toHaveBeenCalledWith(event.data.conversion, event, {
      eventId: event.id,
      attempt: 3,
      signedAt: NOW,
    })
  })

  it.each([
    ['missing_signature', 400, async () => ({ headers: {}, rawBody: new Uint8Array(2) })],
    [
      'malformed_signature',
      400,
      async () => ({ headers: { 'service-signature': 't=x' }, rawBody: new Uint8Array(2) }),
    ],
    [
      'signature_mismatch',
      401,
      async () => ({
        ...(await input(buildConversionEvent())),
        rawBody: new TextEncoder().encode('{}'),
      }),
    ],
    [
      'timestamp_outside_tolerance',
      401,
      () => input(buildConversionEvent(), { timestamp: NOW - 301 }),
    ],
    ['malformed_json', 400, () => input('not json')],
    ['invalid_payload', 400, () => input({ id: 'evt_1', type: 'conversion.created' })],
    [
      'event_id_mismatch',
      400,
      async () => {
        const i = await input(buildConversionEvent())
        return { ...i, headers: { ...i.headers, 'service-event-id': 'evt_other' } }
      },
    ],
    [
      'payload_too_large',
      413,
      () => input({ ...buildTestEvent(), data: { pad: 'x'.repeat(2 * 1024 * 1024) } }),
    ],
  ] as const)(
    'answers %s with %i and that code, handler not called',
    async (code, status, make) => {
      const { receiver, onConversion } = receiverWith()
      const onError = vi.fn()
      const r = createReceiver({ secret: SECRET, now, onConversion, onError })
      const result = await r.receive(await make())
      expect(result.status).toBe(status)
      expect(result.outcome).toBe('rejected')
      expect(JSON.parse(result.body)).toMatchObject({ error: { code } })
      expect(result.error?.code).toBe(code)
      expect(onConversion).not.toHaveBeenCalled()
      expect(onError).toHaveBeenCalledTimes(1)
      expect(receiver.maxBodyBytes).toBe(1024 * 1024)
    },
  )

  it('answers a second delivery of the same event 200 duplicate without calling the handler', async () => {
    const onDuplicate = vi.fn()
    const { receiver, onConversion } = receiverWith({ onDuplicate })
    const event = buildConversionEvent()
    expect((await receiver.receive(await input(event))).outcome).toBe('processed')
    const again = await receiver.receive(await input(event, { attempt: 2, timestamp: NOW + 60 }))
    expect(again).toMatchObject({ status: 200, outcome: 'duplicate' })
    expect(onConversion).toHaveBeenCalledTimes(1)
    expect(onDuplicate).toHaveBeenCalledTimes(1)
  })

  it('de-duplicates on the signed body id, whatever Service-Event-Id is absent', async () => {
    const { receiver, onConversion } = receiverWith()
    const event = buildConversionEvent()
    const first = await input(event)
    const { 'service-event-id': _drop, ...headers } = first.headers
    await receiver.receive({ ...first, headers })
    expect((await receiver.receive({ ...first, headers })).outcome).toBe('duplicate')
    expect(onConversion).toHaveBeenCalledTimes(1)
  })

  it('answers an older event after a newer one of the same conversion 200 stale, handler not called', async () => {
    const onStale = vi.fn()
    const { receiver, seen } = receiverWith({ onStale })
    const newer = buildConversionEvent({
      type: 'conversion.updated',
      createdAt: at(20),
      conversion: { id: 9, status: 'approved' },
    })
    const older = buildConversionEvent({
      createdAt: at(10),
      conversion: { id: 9, status: 'pending' },
    })
    expect((await receiver.receive(await input(newer))).outcome).toBe('processed')
    expect(await receiver.receive(await input(older))).toMatchObject({
      status: 200,
      outcome: 'stale',
    })
    expect(seen.map((c) => c.status)).toEqual(['approved'])
    expect(onStale).toHaveBeenCalledWith(older, expect.objectContaining({ eventId: older.id }))
  })

  it('answers 500 handler_failed when the handler throws, and lets the retry succeed', async () => {
    let fail = true
    const onConversion = vi.fn(() => {
      if (fail) throw new Error('database down: password=hunter2')
    })
    const receiver = createReceiver({ secret: SECRET, now, onConversion })
    const event = buildConversionEvent()
    const first = await receiver.receive(await input(event))
    expect(first).toMatchObject({ status: 500, outcome: 'failed' })
    expect(JSON.parse(first.body)).toMatchObject({ error: { code: 'handler_failed' } })
    expect(first.body).not.toContain('hunter2')
    expect(String((first.error?.cause as Error | undefined)?.message)).toContain('database down')
    fail = false
    expect(await receiver.receive(await input(event, { attempt: 2 }))).toMatchObject({
      status: 200,
      outcome: 'processed',
    })
    expect(onConversion).toHaveBeenCalledTimes(2)
  })

  it('awaits a handler thenable that is not a native promise, and answers 500 when it rejects', async () => {
    const thenable = (fail: boolean) => ({
      // biome-ignore lint/suspicious/noThenProperty: a promise library's thenable, on purpose
      then(resolve: () => void, reject: (error: Error) => void) {
        setTimeout(() => (fail ? reject(new Error('late failure')) : resolve()), 10)
      },
    })
    let fail = true
    const receiver = createReceiver({ secret: SECRET, now, onConversion: () => thenable(fail) })
    const event = buildConversionEvent()
    expect((await receiver.receive(await input(event))).status).toBe(500)
    fail = false
    expect((await receiver.receive(await input(event))).outcome).toBe('processed')
  })

  it('accepts bytes and handler promises from another realm (vm context)', async () => {
    const { headers, rawBody } = await input(buildConversionEvent())
    const foreignBytes = runInNewContext('new Uint8Array(length)', {
      length: rawBody.length,
    }) as Uint8Array
    foreignBytes.set(rawBody)
    let finished = false
    const foreignPromise = runInNewContext(
      '(done) => new Promise((r) => setTimeout(() => { done(); r() }, 10))',
      {
        setTimeout,
      },
    ) as (done: () => void) => Promise<void>
    const receiver = createReceiver({
      secret: SECRET,
      now,
      onConversion: () =>
        foreignPromise(() => {
          finished = true
        }),
    })
    const result = await receiver.receive({ headers, rawBody: foreignBytes })
    expect(result.outcome).toBe('processed')
    expect(finished).toBe(true)
  })

  it('answers 409 for the same event while its first attempt runs, then duplicate', async () => {
    const gate = deferred()
    const onConversion = vi.fn(() => gate.promise)
    const receiver = createReceiver({ secret: SECRET, now, onConversion })
    const event = buildConversionEvent()
    const first = receiver.receive(await input(event))
    await vi.waitFor(() => expect(onConversion).toHaveBeenCalledTimes(1))
    const concurrent = await receiver.receive(await input(event, { attempt: 2 }))
    expect(concurrent).toMatchObject({ status: 409, outcome: 'in_progress' })
    expect(JSON.parse(concurrent.body)).toMatchObject({ error: { code: 'event_in_progress' } })
    gate.resolve()
    expect((await first).outcome).toBe('processed')
    expect((await receiver.receive(await input(event, { attempt: 3 }))).outcome).toBe('duplicate')
    expect(onConversion).toHaveBeenCalledTimes(1)
  })

  it('runs two events of one conversion one after the other, in createdAt order', async () => {
    const log: string[] = []
    const gate = deferred()
    // The store, with each event it was asked to begin seen.
    const inner = memoryStore()
    const begun: string[] = []
    const store: EventStore = {
      begin: (claim) => {
        begun.push(claim.eventId)
        return inner.begin(claim)
      },
      commit: inner.commit,
      release: inner.release,
    }
    const receiver = createReceiver({
      secret: SECRET,
      now,
      store,
      onConversion: async (conversion) => {
        log.push(`start ${conversion.status}`)
        if (conversion.status === 'pending') await gate.promise
        log.push(`end ${conversion.status}`)
      },
    })
    const older = buildConversionEvent({
      createdAt: at(1),
      conversion: { id: 3, status: 'pending' },
    })
    const newer = buildConversionEvent({
      type: 'conversion.updated',
      createdAt: at(2),
      conversion: { id: 3, status: 'approved' },
    })
    const first = receiver.receive(await input(older))
    await vi.waitFor(() => expect(log).toEqual(['start pending']))
    const second = receiver.receive(await input(newer))
    // The newer event has reached the store, and a turn of the event loop has passed:
    // had its begin not waited for the older one, its handler would have started.
    await vi.waitFor(() => expect(begun).toContain(newer.id))
    await new Promise((resolve) => setImmediate(resolve))
    expect(log).toEqual(['start pending'])
    gate.resolve()
    expect((await first).outcome).toBe('processed')
    expect((await second).outcome).toBe('processed')
    expect(log).toEqual(['start pending', 'end pending', 'start approved', 'end approved'])
  })

  it('drops the older of two simultaneous events when the newer one ran first', async () => {
    const gate = deferred()
    const statuses: string[] = []
    const receiver = createReceiver({
      secret: SECRET,
      now,
      onConversion: async (conversion) => {
        statuses.push(conversion.status)
        await gate.promise
      },
    })
    const newer = buildConversionEvent({
      type: 'conversion.updated',
      createdAt: at(2),
      conversion: { id: 4, status: 'approved' },
    })
    const older = buildConversionEvent({
      createdAt: at(1),
      conversion: { id: 4, status: 'pending' },
    })
    const first = receiver.receive(await input(newer))
    await vi.waitFor(() => expect(statuses).toEqual(['approved']))
    const second = receiver.receive(await input(older))
    gate.resolve()
    expect((await first).outcome).toBe('processed')
    expect((await second).outcome).toBe('stale')
    expect(statuses).toEqual(['approved'])
  })

  it('answers an unknown event type without a handler 200 ignored, and dispatches it to onUnknownEvent', async () => {
    const event = {
      id: 'evt_payout',
      type: 'payout.sent',
      createdAt: at(1),
      data: { amount: '5.00' },
    }
    const { receiver, onConversion } = receiverWith()
    expect(await receiver.receive(await input(event))).toMatchObject({
      status: 200,
      outcome: 'ignored',
    })
    expect(onConversion).not.toHaveBeenCalled()
    const onUnknownEvent = vi.fn()
    const withUnknown = createReceiver({ secret: SECRET, now, onUnknownEvent })
    expect((await withUnknown.receive(await input(event))).outcome).toBe('processed')
    expect(onUnknownEvent).toHaveBeenCalledWith(
      event,
      expect.objectContaining({ eventId: 'evt_payout' }),
    )
    expect((await withUnknown.receive(await input(event))).outcome).toBe('duplicate')
  })

  it('hands an unknown conversion status to the handler', async () => {
    const { receiver, seen } = receiverWith()
    const event = buildConversionEvent({ conversion: { status: 'clawed_back' } })
    expect((await receiver.receive(await input(event))).outcome).toBe('processed')
    expect(seen[0]?.status).toBe('clawed_back')
  })

  it('routes webhook.test to on["webhook.test"] and ignores it otherwise', async () => {
    const { receiver } = receiverWith()
    expect((await receiver.receive(await input(buildTestEvent()))).outcome).toBe('ignored')
    const onTest = vi.fn()
    const withTest = createReceiver({ secret: SECRET, now, on: { 'webhook.test': onTest } })
    const event = buildTestEvent()
    expect((await withTest.receive(await input(event))).outcome).toBe('processed')
    expect(onTest).toHaveBeenCalledWith(event, expect.objectContaining({ eventId: event.id }))
  })

  it('lets on[type] win over onConversion for its type', async () => {
    const onUpdated = vi.fn()
    const { receiver, onConversion } = receiverWith({ on: { 'conversion.updated': onUpdated } })
    await receiver.receive(await input(buildConversionEvent({ type: 'conversion.updated' })))
    await receiver.receive(
      await input(buildConversionEvent({ type: 'conversion.created', conversion: { id: 2 } })),
    )
    expect(onUpdated).toHaveBeenCalledTimes(1)
    expect(onConversion).toHaveBeenCalledTimes(1)
  })

  it('answers 503 store_unavailable when the store fails, marks nothing, and recovers', async () => {
    const inner = memoryStore()
    let down = true
    const guard =
      <T extends unknown[], R>(fn: (...args: T) => R) =>
      (...args: T): R | Promise<never> =>
        down ? Promise.reject(new Error('ECONNREFUSED')) : fn(...args)
    const store: EventStore = {
      begin: guard(inner.begin),
      commit: guard(inner.commit),
      release: guard(inner.release),
    }
    const { receiver, onConversion } = receiverWith({ store })
    const event = buildConversionEvent()
    const result = await receiver.receive(await input(event))
    expect(result).toMatchObject({ status: 503, outcome: 'failed' })
    expect(JSON.parse(result.body)).toMatchObject({ error: { code: 'store_unavailable' } })
    expect(onConversion).not.toHaveBeenCalled()
    down = false
    expect((await receiver.receive(await input(event))).outcome).toBe('processed')
  })

  it('answers 503, never 2xx, when the handler ran but the commit failed', async () => {
    const inner = memoryStore()
    const store: EventStore = { ...inner, commit: () => Promise.reject(new Error('timeout')) }
    const { receiver, onConversion } = receiverWith({ store })
    const result = await receiver.receive(await input(buildConversionEvent()))
    expect(result.status).toBe(503)
    expect(onConversion).toHaveBeenCalledTimes(1)
  })

  it('keeps the answer when an observation hook throws or rejects', async () => {
    const { receiver } = receiverWith({
      onError: () => {
        throw new Error('observer broke')
      },
      onDuplicate: () => Promise.reject(new Error('async observer broke')) as never,
    })
    const event = buildConversionEvent()
    expect((await receiver.receive({ headers: {}, rawBody: new Uint8Array() })).status).toBe(400)
    await receiver.receive(await input(event))
    expect((await receiver.receive(await input(event))).outcome).toBe('duplicate')
  })

  it('answers 500 internal_error instead of throwing when the input is nonsense', async () => {
    const { receiver } = receiverWith()
    const result = await receiver.receive({ headers: null as never, rawBody: new Uint8Array(1) })
    expect(result.status).toBe(500)
    expect(JSON.parse(result.body)).toMatchObject({ error: { code: 'internal_error' } })
  })

  it('builds adapter answers with reject(): 405 with Allow, 413 closing the connection', () => {
    const { receiver } = receiverWith()
    const notAllowed = receiver.reject('method_not_allowed')
    expect(notAllowed).toMatchObject({ status: 405, headers: { allow: 'POST' } })
    expect(receiver.reject('payload_too_large').headers.connection).toBe('close')
  })

  it('keeps every answer body short enough for the service to store whole', async () => {
    const { receiver } = receiverWith()
    for (const code of [
      'raw_body_unavailable',
      'store_unavailable',
      'handler_failed',
      'event_in_progress',
    ] as const) {
      expect(receiver.reject(code).body.length).toBeLessThan(500)
    }
  })

  it('orders a created and an updated event stamped in the same instant: created first', async () => {
    const { receiver, seen } = receiverWith()
    const createdAt = at(30)
    const created = buildConversionEvent({ createdAt, conversion: { id: 21, status: 'pending' } })
    const updated = buildConversionEvent({
      type: 'conversion.updated',
      createdAt,
      conversion: { id: 21, status: 'approved' },
    })
    expect((await receiver.receive(await input(created))).outcome).toBe('processed')
    expect((await receiver.receive(await input(updated))).outcome).toBe('processed')
    // The other way round, the created event is the older one.
    const again = receiverWith()
    expect((await again.receiver.receive(await input(updated))).outcome).toBe('processed')
    expect((await again.receiver.receive(await input(created))).outcome).toBe('stale')
    expect(seen.map((c) => c.status)).toEqual(['pending', 'approved'])
  })

  it('orders two updates less than a millisecond apart', async () => {
    const { receiver, seen } = receiverWith()
    const first = buildConversionEvent({
      type: 'conversion.updated',
      createdAt: '2026-11-20T10:00:01.1231Z',
      conversion: { id: 22, status: 'approved' },
    })
    const second = buildConversionEvent({
      type: 'conversion.updated',
      createdAt: '2026-11-20T10:00:01.1239Z',
      conversion: { id: 22, status: 'available' },
    })
    expect((await receiver.receive(await input(first))).outcome).toBe('processed')
    expect((await receiver.receive(await input(second))).outcome).toBe('processed')
    expect(seen.map((c) => c.status)).toEqual(['approved', 'available'])
  })

  it('keeps every error body under 500 characters, even with a long adapter message', () => {
    const { receiver } = receiverWith()
    const result = receiver.reject('raw_body_unavailable', 'x'.repeat(2000))
    expect(result.body.length).toBeLessThan(500)
    expect(JSON.parse(result.body).error.code).toBe('raw_body_unavailable')
  })

  it('refuses to start with no handler at all, which would ignore every event', () => {
    expect(() => createReceiver({ secret: SECRET })).toThrow(/no handler/)
    expect(() => createReceiver({ secret: SECRET, onConversions: () => {} } as never)).toThrow(
      /no handler/,
    )
  })

  it('refuses a lease that is not a whole number of milliseconds', () => {
    expect(() => createReceiver({ secret: SECRET, onConversion() {}, leaseMs: 0 })).toThrow(
      TypeError,
    )
    expect(() => createReceiver({ secret: SECRET, onConversion() {}, leaseMs: 1.5 })).toThrow(
      TypeError,
    )
  })

  it('refuses to start without a secret, naming the variable', () => {
    expect(() =>
      createReceiver({ secret: process.env.NO_SUCH_VARIABLE, onConversion() {} }),
    ).toThrow(/AFFILIATE_WEBHOOK_SECRET/)
    expect(() => createReceiver({ secret: '', onConversion() {} })).toThrow(TypeError)
  })
})

/** A store whose claims carry a transaction, as the SQL stores' do: a log of what it did. */
function transactionalStore(commitResult: boolean) {
  const inner = memoryStore()
  const log: string[] = []
  const store: EventStore<{ id: string; log: string[] }> = {
    async begin(input) {
      const begun = await inner.begin(input)
      if (begun.status !== 'claimed') return begun
      return {
        status: 'claimed',
        claim: { ...begun.claim, tx: { id: `tx:${input.eventId}`, log } },
      }
    },
    async commit(claim) {
      log.push(`commit ${claim.tx?.id}`)
      const { tx: _tx, ...plain } = claim
      return commitResult && inner.commit(plain)
    },
    async release(claim) {
      log.push(`rollback ${claim.tx?.id}`)
      const { tx: _tx, ...plain } = claim
      await inner.release(plain)
    },
  }
  return { store, log }
}

describe('createReceiver() with a store whose claims carry a transaction', () => {
  it('hands the claim transaction to the handler as ctx.tx, then commits it', async () => {
    const { store, log } = transactionalStore(true)
    const receiver = createReceiver({
      secret: SECRET,
      now,
      store,
      onConversion(_conversion, event, ctx) {
        ctx.tx.log.push(`write ${event.id} in ${ctx.tx.id}`)
      },
    })
    const event = buildConversionEvent()
    const result = await receiver.receive(await input(event))
    expect(result.outcome).toBe('processed')
    expect(log).toEqual([`write ${event.id} in tx:${event.id}`, `commit tx:${event.id}`])
  })

  it('rolls the transaction back when the handler throws, and answers 500', async () => {
    const { store, log } = transactionalStore(true)
    const receiver = createReceiver({
      secret: SECRET,
      now,
      logger: false,
      store,
      onConversion() {
        throw new Error('downstream')
      },
    })
    const event = buildConversionEvent()
    expect((await receiver.receive(await input(event))).status).toBe(500)
    expect(log).toEqual([`rollback tx:${event.id}`])
  })

  it('answers 503, never 2xx, when the transaction could not commit (its writes are gone)', async () => {
    const { store } = transactionalStore(false)
    const receiver = createReceiver({
      secret: SECRET,
      now,
      logger: false,
      store,
      onConversion() {},
    })
    const result = await receiver.receive(await input(buildConversionEvent()))
    expect(result.status).toBe(503)
    expect(result.error?.code).toBe('store_unavailable')
  })

  it('still answers processed when a store without transactions says another attempt owns the event', async () => {
    const inner = memoryStore()
    const store: EventStore = { ...inner, commit: () => false }
    const receiver = createReceiver({ secret: SECRET, now, store, onConversion() {} })
    expect((await receiver.receive(await input(buildConversionEvent()))).outcome).toBe('processed')
  })

  it('gives handlers of a store without transactions ctx.tx undefined', async () => {
    let seen: unknown = 'unset'
    const receiver = createReceiver({
      secret: SECRET,
      now,
      onConversion(_c, _e, ctx) {
        seen = ctx.tx
      },
    })
    await receiver.receive(await input(buildConversionEvent()))
    expect(seen).toBeUndefined()
  })
})

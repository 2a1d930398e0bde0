import { describe, expect, it } from 'vitest'
import { createReceiver } from '../receiver/create-receiver.js'
import type { EventStore } from '../store/event-store.js'
import { memoryStore } from '../store/memory-store.js'
import { buildConversionEvent, signedDelivery } from '../testing/index.js'

const SECRET = 'whsec_streak_test_secret'

// Each event its own conversion: two built in the same millisecond would
// otherwise share an order, and the second be answered stale (a 2xx).
let conversionId = 0
async function delivery(secret = SECRET) {
  const event = buildConversionEvent({ conversion: { id: ++conversionId } })
  const { headers, body } = await signedDelivery({ secret, event })
  return { headers, rawBody: new TextEncoder().encode(body) }
}

/** A memory store without its own counting, or with `recordAnswer` replaced. */
function storeWithout(recordAnswer?: EventStore['recordAnswer']): EventStore {
  const inner = memoryStore()
  return {
    begin: (input) => inner.begin(input),
    commit: (claim) => inner.commit(claim),
    release: (claim) => inner.release(claim),
    ...(recordAnswer ? { recordAnswer } : {}),
  }
}

function receiverWith(store: EventStore, onConversion: () => void) {
  const lines: string[] = []
  const receiver = createReceiver({
    secret: SECRET,
    store,
    onConversion,
    telemetry: false,
    logger: { warn: (l: string) => lines.push(l), error: () => {} },
  })
  return { receiver, warnings: () => lines.filter((l) => l.includes('answers in a row')) }
}

describe('failure streak: a warning before the service disables the endpoint', () => {
  it('warns at 5, 10 and 15 answers in a row that were not 2xx, naming the codes and doctor', async () => {
    const { receiver, warnings } = receiverWith(memoryStore(), () => {
      throw new Error('database down')
    })
    for (let i = 0; i < 16; i++) {
      expect((await receiver.receive(await delivery())).status).toBe(500)
    }
    const lines = warnings()
    expect(lines).toHaveLength(3)
    expect(lines[0]).toBe(
      "affiliate-webhooks: 5 answers in a row were not 2xx (latest: handler_failed x5); the service disables an endpoint after 20 failed attempts in a row and then queues nothing for it. Run `npx @affiliate-webhooks/cli doctor` to see the endpoint's recent deliveries and what to fix.",
    )
    expect(lines[1]).toMatch(/^affiliate-webhooks: 10 answers in a row/)
    expect(lines[2]).toMatch(/^affiliate-webhooks: 15 answers in a row/)
  })

  it('starts again from zero after a 2xx', async () => {
    let fail = true
    const { receiver, warnings } = receiverWith(memoryStore(), () => {
      if (fail) throw new Error('flaky')
    })
    for (let i = 0; i < 4; i++) await receiver.receive(await delivery())
    fail = false
    expect((await receiver.receive(await delivery())).status).toBe(200)
    fail = true
    for (let i = 0; i < 4; i++) await receiver.receive(await delivery())
    expect(warnings()).toEqual([])
    await receiver.receive(await delivery())
    expect(warnings()).toHaveLength(1)
  })

  it('names the mix of codes, newest first', async () => {
    const { receiver, warnings } = receiverWith(memoryStore(), () => {
      throw new Error('x')
    })
    for (let i = 0; i < 3; i++) await receiver.receive(await delivery('whsec_some_other_secret'))
    for (let i = 0; i < 2; i++) await receiver.receive(await delivery())
    expect(warnings()[0]).toContain('(latest: handler_failed x2, signature_mismatch x3)')
  })

  it('counts in the receiver when the store has no recordAnswer', async () => {
    const store = storeWithout()
    const { receiver, warnings } = receiverWith(store, () => {
      throw new Error('x')
    })
    for (let i = 0; i < 5; i++) await receiver.receive(await delivery())
    expect(warnings()).toHaveLength(1)
  })

  it('never changes the answer when the store cannot count', async () => {
    const store = storeWithout(() => Promise.reject(new Error('Redis down')))
    const { receiver, warnings } = receiverWith(store, () => {})
    expect((await receiver.receive(await delivery())).outcome).toBe('processed')
    expect(warnings()).toEqual([])
  })

  it('still warns from its own count while the store cannot count (an outage is a streak too)', async () => {
    const store = storeWithout(() => Promise.reject(new Error('Redis down')))
    const { receiver, warnings } = receiverWith(store, () => {
      throw new Error('x')
    })
    for (let i = 0; i < 5; i++) await receiver.receive(await delivery())
    await new Promise((resolve) => setImmediate(resolve))
    expect(warnings()).toHaveLength(1)
  })

  it("counts an adapter's refusals (a body parser took the bytes, a body too large), not stray methods", async () => {
    const { receiver, warnings } = receiverWith(memoryStore(), () => {})
    for (let i = 0; i < 6; i++) receiver.reject('method_not_allowed')
    for (let i = 0; i < 6; i++) receiver.reject('not_found')
    expect(warnings()).toEqual([])
    for (let i = 0; i < 3; i++) receiver.reject('raw_body_unavailable')
    for (let i = 0; i < 2; i++) receiver.reject('payload_too_large')
    expect(warnings()).toEqual([expect.stringContaining('5 answers in a row')])
  })
})

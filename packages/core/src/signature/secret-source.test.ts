import { describe, expect, it, vi } from 'vitest'
import { createReceiver } from '../receiver/create-receiver.js'
import { buildConversionEvent, signedDelivery } from '../testing/index.js'
import type { SecretSource } from './secret-source.js'
import { verifyEvent } from './verify.js'

const OLD = 'whsec_before_rotation'
const NEW = 'whsec_after_rotation'
// After every createdAt the tests stamp (now, or fixed 2026 dates): an event is never signed before it was created.
const NOW = 2_000_000_000

let conversionId = 0
async function delivery(secret: string) {
  // Each event its own conversion: two built in the same millisecond would
  // otherwise share an order, and the second be answered stale.
  const event = buildConversionEvent({ conversion: { id: ++conversionId } })
  const signed = await signedDelivery({ secret, event, timestamp: NOW })
  return { headers: signed.headers, rawBody: new TextEncoder().encode(signed.body) }
}

/** A source whose secrets a test changes, counting the asks. */
function source(initial: string[], refreshIntervalMs = 5_000) {
  let secrets = initial
  const getSecrets = vi.fn(async () => secrets)
  return {
    source: { getSecrets, refreshIntervalMs } satisfies SecretSource,
    getSecrets,
    set(next: string[]) {
      secrets = next
    },
  }
}

function receiver(secret: SecretSource, clock: { ms: number }) {
  return createReceiver({ secret, now: () => clock.ms, onConversion: () => {} })
}

describe('secret: a SecretSource', () => {
  it('is asked once before the first delivery, not per delivery', async () => {
    const { source: s, getSecrets } = source([OLD])
    const r = receiver(s, { ms: NOW * 1000 })
    for (let i = 0; i < 5; i++) expect((await r.receive(await delivery(OLD))).status).toBe(200)
    expect(getSecrets).toHaveBeenCalledTimes(1)
  })

  it('picks up a rotated secret without a restart: a mismatch asks again', async () => {
    const { source: s, set, getSecrets } = source([OLD])
    const clock = { ms: NOW * 1000 }
    const r = receiver(s, clock)
    expect((await r.receive(await delivery(OLD))).status).toBe(200)
    set([NEW, OLD])
    expect((await r.receive(await delivery(NEW))).outcome).toBe('processed')
    // The old secret keeps working while the source still lists it (grace period).
    expect((await r.receive(await delivery(OLD))).status).toBe(200)
    expect(getSecrets).toHaveBeenCalledTimes(2)
  })

  it('is asked at most once per refreshIntervalMs, however many signatures fail', async () => {
    const { source: s, getSecrets } = source([OLD], 5_000)
    const clock = { ms: NOW * 1000 }
    const r = receiver(s, clock)
    const bad = await delivery('whsec_an_attacker_guess')
    const answers = await Promise.all(Array.from({ length: 50 }, () => r.receive(bad)))
    expect(answers.every((a) => a.status === 401 && a.error?.code === 'signature_mismatch')).toBe(
      true,
    )
    expect(getSecrets).toHaveBeenCalledTimes(2) // the first load, and one ask after the first mismatch
    for (let i = 0; i < 20; i++) await r.receive(bad)
    expect(getSecrets).toHaveBeenCalledTimes(2)
    clock.ms += 5_000
    await r.receive(bad)
    expect(getSecrets).toHaveBeenCalledTimes(3)
  })

  it('answers 503 secret_unavailable (the service retries) while the source fails, and recovers', async () => {
    let down = true
    const s: SecretSource = {
      getSecrets: async () => {
        if (down) throw new Error('redis: connection refused (password hunter2)')
        return [OLD]
      },
      refreshIntervalMs: 0,
    }
    const r = receiver(s, { ms: NOW * 1000 })
    const first = await r.receive(await delivery(OLD))
    expect(first.status).toBe(503)
    expect(first.error?.code).toBe('secret_unavailable')
    expect(first.body).not.toMatch(/hunter2|redis/)
    down = false
    expect((await r.receive(await delivery(OLD))).status).toBe(200)
  })

  it.each([
    ['no secrets', []],
    ['a value that is not a string', [42]],
  ])('a source that returns %s is a failing source, not an open door', async (_, secrets) => {
    const s = { getSecrets: async () => secrets as unknown as string[], refreshIntervalMs: 0 }
    const answer = await receiver(s, { ms: NOW * 1000 }).receive(await delivery(OLD))
    expect(answer.status).toBe(503)
  })

  it('works with verifyEvent too', async () => {
    const { source: s } = source([NEW])
    const input = await delivery(NEW)
    await expect(
      verifyEvent({ ...input, secret: s, now: () => NOW * 1000 }),
    ).resolves.toMatchObject({
      type: 'conversion.created',
    })
  })

  it('asks again in the background once the secrets are a minute old, so an expired one stops verifying', async () => {
    const { source: s, set, getSecrets } = source([NEW, OLD])
    const clock = { ms: NOW * 1000 }
    const r = receiver(s, clock)
    expect((await r.receive(await delivery(OLD))).status).toBe(200)
    // The old secret's grace ends at the source; deliveries keep matching the cached list.
    set([NEW])
    clock.ms += 30_000
    expect((await r.receive(await delivery(OLD))).status).toBe(200)
    expect(getSecrets).toHaveBeenCalledTimes(1)
    clock.ms += 31_000
    // Past a minute: this match still passes, and asks again in the background.
    expect((await r.receive(await delivery(NEW))).status).toBe(200)
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(getSecrets).toHaveBeenCalledTimes(2)
    const refused = await r.receive(await delivery(OLD))
    expect(refused.error?.code).toBe('signature_mismatch')
  })
})

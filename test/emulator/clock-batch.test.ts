import { afterEach, describe, expect, it } from 'vitest'
import {
  type Harness,
  type Receiver,
  startEmulator,
  startReceiver,
} from '../support/emulator-harness.js'

let harness: Harness | undefined
let receiver: Receiver | undefined

afterEach(async () => {
  await harness?.close()
  await receiver?.close()
  harness = undefined
  receiver = undefined
})

describe('POST /emulator/clock sends a batch as the service does', () => {
  it('ten deliveries to a receiver that never answers: all ten go out at once, the route answers in under 15 s', async () => {
    const arrived: number[] = []
    // Never answers: each attempt ends at the 10 s limit.
    receiver = await startReceiver(() => {
      arrived.push(performance.now())
    })
    harness = await startEmulator({ batchIntervalMs: 60_000 })
    await harness.register(receiver.url)
    for (let id = 1; id <= 10; id++) {
      const emitted = await harness.call('POST', '/emulator/conversions', {
        body: { id, status: 'pending' },
      })
      expect(emitted.status).toBe(200)
    }
    const started = performance.now()
    const reply = await harness.advance(60_000)
    const took = performance.now() - started
    expect(reply.status).toBe(200)
    expect(reply.body.data.attempts).toBe(10)
    expect(took).toBeLessThan(15_000)
    // One after another would be 100 s; together, the ten arrive within moments.
    expect(arrived).toHaveLength(10)
    expect(Math.max(...arrived) - Math.min(...arrived)).toBeLessThan(5_000)
    const log = (await harness.call('GET', '/emulator/log')).body.data
    expect(log.map((entry: { result: string }) => entry.result)).toEqual(Array(10).fill('timeout'))
  }, 30_000)

  it('batches stay in order: the second batch goes out only after the first settled', async () => {
    const arrived: { attempt: string; at: number }[] = []
    receiver = await startReceiver((req, res) => {
      arrived.push({
        attempt: String(req.headers['service-delivery-attempt']),
        at: performance.now(),
      })
      // The first attempt hangs past the limit; the retry a minute later answers.
      if (req.headers['service-delivery-attempt'] === '2') res.writeHead(200).end()
    })
    harness = await startEmulator({ batchIntervalMs: 60_000, attemptTimeoutMs: 500 })
    await harness.register(receiver.url)
    await harness.call('POST', '/emulator/conversions', { body: { id: 1, status: 'pending' } })
    await harness.call('POST', '/emulator/conversions', { body: { id: 2, status: 'pending' } })
    const reply = await harness.advance(3 * 60_000)
    expect(reply.body.data.attempts).toBe(4)
    expect(arrived.map((a) => a.attempt)).toEqual(['1', '1', '2', '2'])
    // Attempts 2 were sent once both attempts 1 had timed out.
    const firstRound = Math.max(arrived[0]?.at ?? 0, arrived[1]?.at ?? 0)
    expect((arrived[2]?.at ?? 0) - firstRound).toBeGreaterThanOrEqual(450)
  }, 30_000)
})

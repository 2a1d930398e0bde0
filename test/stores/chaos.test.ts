/**
 * End to end, under the service's delivery rules: the CLI's delivery simulator
 * sends hundreds of conversion events (duplicates, out-of-order arrivals, minute
 * batches, retries on the schedule at 3600x) to every adapter with the memory
 * store, and to two processes sharing Redis, one of them SIGKILLed and restarted
 * mid-run. Handlers fail at random the first time they see an event.
 */
import { type ChildProcess, fork } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { once } from 'node:events'
import type { Conversion, ConversionEvent } from '@affiliate-webhooks/core'
import { memoryStore } from '@affiliate-webhooks/core'
import {
  type AttemptRecord,
  runSimulation,
  seededRandom,
} from '@affiliate-webhooks/emulator/internal'
import { Redis } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'
import { adapters } from '../support/conformance-adapters.js'
import { freePort, REDIS_URL } from '../support/redis-servers.js'
import { type Effects, expectChaos, expectExactlyOnceAndNewestWins } from './chaos-checks.js'

const SECRET = 'whsec_chaos_test'
const MINUTE = 60_000
/** An hour of the schedule per real second: +1 min is 17 ms, +2 h is 2 s. */
const TIME_SCALE = 3600
const FAIL_FIRST_RATE = 0.2

describe.each(adapters)('chaos against $name with the memory store', (adapter) => {
  it('ends every delivery succeeded, applies each effect once, keeps each conversion at its newest status', async () => {
    const random = seededRandom(0xc4a05)
    const effects: Effects = { applied: new Map(), state: new Map(), order: new Map() }
    const seen = new Set<string>()
    const running = await adapter.start({
      secret: SECRET,
      store: memoryStore(),
      async onConversion(conversion: Conversion, event: ConversionEvent) {
        if (!seen.has(event.id)) {
          seen.add(event.id)
          if (random() < FAIL_FIRST_RATE) throw new Error('flaky downstream')
        }
        // Handlers take a moment, so deliveries overlap and retries race them.
        await new Promise((resolve) => setTimeout(resolve, random() * 4))
        effects.applied.set(event.id, (effects.applied.get(event.id) ?? 0) + 1)
        effects.state.set(conversion.id, `${event.createdAt}|${conversion.status}`)
        const order = effects.order.get(conversion.id) ?? []
        order.push(event.createdAt)
        effects.order.set(conversion.id, order)
      },
    })
    try {
      const report = await runSimulation({
        url: running.url,
        secret: SECRET,
        conversions: 60,
        duplicates: 0.25,
        reorder: 0.25,
        concurrency: 16,
        timeScale: TIME_SCALE,
        windowMs: 15 * MINUTE,
        seed: 20261121,
      })
      expect(report.events.length).toBeGreaterThan(200)
      expectExactlyOnceAndNewestWins(report, effects)
      expectChaos(report)
    } finally {
      await running.close()
    }
  })
})

describe('chaos against two processes sharing Redis, one SIGKILLed and restarted mid-run', () => {
  const prefix = `aw-chaos-${randomUUID().slice(0, 8)}:`
  const redis = new Redis(REDIS_URL)
  const children = new Set<ChildProcess>()

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL')
    const keys = await redis.keys(`${prefix}*`)
    if (keys.length > 0) await redis.unlink(...keys)
    redis.disconnect()
  })

  async function startReceiver(port: number): Promise<{ child: ChildProcess; pid: number }> {
    const child = fork(new URL('./chaos-receiver.mjs', import.meta.url), {
      env: {
        ...process.env,
        REDIS_URL,
        WEBHOOK_SECRET: SECRET,
        KEY_PREFIX: prefix,
        PORT: String(port),
        // Short, so what a killed process held frees up within the schedule's first attempts.
        LEASE_MS: '1000',
        FAIL_FIRST_RATE: String(FAIL_FIRST_RATE),
      },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    children.add(child)
    child.once('exit', () => children.delete(child))
    const [message] = (await once(child, 'message')) as [{ pid: number }]
    return { child, pid: message.pid }
  }

  it('ends every delivery succeeded; exactly-once except where the kill interrupted a handler; newest status wins', async () => {
    const ports = [await freePort(), await freePort()] as const
    const [first, second] = [await startReceiver(ports[0]), await startReceiver(ports[1])]
    // The load balancer: a random process that is up, as a health check would allow.
    const live = new Set<number>(ports)
    const pick = () => {
      const up = [...live]
      return `http://127.0.0.1:${up[Math.floor(Math.random() * up.length)]}/hooks`
    }

    let killed: { pid: number; restartedPid: number } | undefined
    let restart: Promise<void> | undefined
    let succeeded = 0
    const conversions = 120
    const report = await runSimulation({
      url: pick,
      secret: SECRET,
      conversions,
      duplicates: 0.2,
      reorder: 0.2,
      concurrency: 16,
      timeScale: TIME_SCALE,
      windowMs: 90 * MINUTE,
      seed: 5318008,
      onAttempt(attempt: AttemptRecord) {
        if (attempt.ok) succeeded++
        // A third of the way in, while requests are in flight, the process dies by
        // SIGKILL right after a handler's effect and before its commit.
        if (restart === undefined && succeeded >= conversions) {
          const victim = first
          victim.child.send('crash-after-next-effect')
          restart = once(victim.child, 'exit').then(async () => {
            live.delete(ports[0])
            const again = await startReceiver(ports[0])
            killed = { pid: victim.pid, restartedPid: again.pid }
            live.add(ports[0])
          })
        }
      },
    })
    await restart
    expect(killed, 'the kill and restart happened during the run').toBeDefined()
    const { pid: killedPid, restartedPid } = killed as { pid: number; restartedPid: number }

    const effectLog = (await redis.lrange(`${prefix}effects`, 0, -1)).map((entry) => {
      const [eventId, pid] = entry.split('|') as [string, string]
      return { eventId, pid: Number(pid) }
    })
    const acked = new Set(
      (await redis.lrange(`${prefix}acks`, 0, -1))
        .filter((entry) => entry.endsWith(`|${killedPid}`))
        .map((entry) => entry.split('|')[0]),
    )
    const stateRows = await redis.hgetall(`${prefix}state`)
    const effects: Effects = {
      applied: new Map(),
      state: new Map(Object.entries(stateRows).map(([id, row]) => [Number(id), row])),
      order: new Map(),
    }
    for (const { eventId } of effectLog) {
      effects.applied.set(eventId, (effects.applied.get(eventId) ?? 0) + 1)
    }

    // The store commit and the handler's effect are two steps, not one atomic one:
    // a process killed between them leaves an effect whose event is not marked
    // done, and the retry runs the handler again (at-least-once, by design: a lost
    // event would be worse). Such an event shows an effect by the killed pid and
    // no 200 written by it. For exactly those, and at most one per request that
    // could be in flight there, a second run is legitimate; every other event must
    // have been applied exactly once, which is the strongest true statement.
    const interrupted = new Set(
      effectLog
        .filter(({ eventId, pid }) => pid === killedPid && !acked.has(eventId))
        .map(({ eventId }) => eventId),
    )
    // An interrupted effect was never committed, so the store never knew of it: an
    // older event of its conversion may rightly run after it. The order is checked
    // over every other effect.
    const createdAt = new Map(report.events.map((e) => [e.id, e]))
    for (const { eventId, pid } of effectLog) {
      if (pid === killedPid && interrupted.has(eventId)) continue
      const event = createdAt.get(eventId) as ConversionEvent
      const order = effects.order.get(event.data.conversion.id) ?? []
      order.push(event.createdAt)
      effects.order.set(event.data.conversion.id, order)
    }
    // The crash landed between an effect and its commit, so at least that event is here.
    expect(interrupted.size).toBeGreaterThanOrEqual(1)
    expect(interrupted.size).toBeLessThanOrEqual(16)
    for (const eventId of interrupted) {
      const runs = effectLog.filter((e) => e.eventId === eventId)
      // One run in the killed process at most, then at most one more elsewhere.
      expect(runs.filter((e) => e.pid === killedPid).length).toBe(1)
      expect(runs.length).toBeLessThanOrEqual(2)
    }
    expectExactlyOnceAndNewestWins(report, effects, interrupted)
    expectChaos(report)
    // Both processes, and the restarted one, did real work.
    const pids = new Set(effectLog.map((e) => e.pid))
    expect(pids.has(killedPid)).toBe(true)
    expect(pids.has(second.pid)).toBe(true)
    expect(pids.has(restartedPid)).toBe(true)
    expect(report.events.length).toBeGreaterThan(400)
  })
})

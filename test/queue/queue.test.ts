/**
 * The queued mode end to end on the machine's Redis: the node adapter hands
 * events to BullMQ through `bullmqHandoff`, `createWorker` runs the handlers.
 */
import {
  type BullmqHandoffOptions,
  bullmqHandoff,
  failedJobs,
  queueStats,
  retryFailed,
} from '@affiliate-webhooks/bullmq'
import type {
  Conversion,
  ConversionEvent,
  EventStore,
  Logger,
  ReceiverOptions,
} from '@affiliate-webhooks/core'
import { buildConversionEvent } from '@affiliate-webhooks/core/testing'
import { affiliateWebhook } from '@affiliate-webhooks/node'
import { afterEach, describe, expect, it } from 'vitest'
import { PATH, type Running, serve } from '../support/conformance-adapters.js'
import { SECRET, send } from '../support/conformance-cases.js'
import { freePort } from '../support/redis-servers.js'
import { type QueueSetup, queueSetup } from './queue-harness.js'

const cleanup: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close()
})

async function receiver(
  setup: QueueSetup,
  options: Partial<ReceiverOptions> = {},
): Promise<Running> {
  const app = await serve(
    affiliateWebhook({
      secret: SECRET,
      queue: setup.handoff,
      store: setup.store,
      path: PATH,
      ...options,
    }),
  )
  cleanup.push(app.close)
  return app
}

function setupFor(handoffOptions: Partial<BullmqHandoffOptions> = {}): QueueSetup {
  const setup = queueSetup('queue', handoffOptions)
  cleanup.push(setup.close)
  return setup
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A logger that keeps what it is told. */
function keptLog(): Logger & { lines: string[] } {
  const lines: string[] = []
  return {
    lines,
    warn: (line: string) => lines.push(line),
    error: (line: string) => lines.push(line),
  }
}

const at = (hour: number) => Date.now() - 3_600_000 * (10 - hour)

/** One conversion's events, an hour apart, oldest first: created, then updates. */
const lifecycle = (id: number, statuses: string[]) =>
  statuses.map((status, i) =>
    buildConversionEvent({
      type: i === 0 ? 'conversion.created' : 'conversion.updated',
      createdAt: at(i),
      conversion: { id, status },
    }),
  )

describe('queued hand-off', () => {
  it('answers every delivery 2xx long before a 15 s handler ends, and runs each event once', async () => {
    const setup = setupFor()
    const runs = new Map<string, number>()
    let firstHandlerEnd = Number.POSITIVE_INFINITY
    setup.startWorker({
      concurrency: 8,
      async onConversion(_c: Conversion, event: ConversionEvent) {
        runs.set(event.id, (runs.get(event.id) ?? 0) + 1)
        await new Promise((resolve) => setTimeout(resolve, 15_000))
        firstHandlerEnd = Math.min(firstHandlerEnd, Date.now())
      },
    })
    const { url } = await receiver(setup)
    const events = Array.from({ length: 8 }, (_, i) =>
      buildConversionEvent({ conversion: { id: 9100 + i } }),
    )
    const started = Date.now()
    // Each event twice at once, then once more while the handlers run.
    const answers = await Promise.all(
      [...events, ...events].map(async (event) => {
        const answer = await send(url, event)
        return { answer, ms: Date.now() - started, at: Date.now() }
      }),
    )
    const again = await Promise.all(events.map((event) => send(url, event, { attempt: 2 })))
    const answeredBy = Date.now()
    for (const { answer, ms } of answers) {
      expect(answer).toMatchObject({ status: 200, json: { outcome: 'queued' } })
      // Generous against the 15 s handler; the service's limit is 10 s.
      expect(ms).toBeLessThan(5_000)
    }
    for (const answer of again) expect(answer.status).toBe(200)
    await setup.settle()
    expect(answeredBy).toBeLessThan(firstHandlerEnd)
    expect([...runs.values()]).toEqual(events.map(() => 1))
    expect((await queueStats(setup.queue)).completed).toBe(8)
  }, 40_000)

  it("renews a running handler's store lease past lockDuration, and drops it once done", async () => {
    const setup = setupFor()
    const event = buildConversionEvent()
    const lease = `${setup.prefix}{c:${event.data.conversion.id}}:lease:${event.id}`
    const seen: number[] = []
    let runs = 0
    setup.startWorker({
      lockDuration: 400,
      leaseMs: 60_000,
      async onConversion() {
        runs++
        // Three lockDurations into the handler: the lease is still there, and short.
        for (let i = 0; i < 3; i++) {
          await new Promise((resolve) => setTimeout(resolve, 400))
          seen.push(await setup.redis.pttl(lease))
        }
      },
    })
    const { url } = await receiver(setup)
    expect((await send(url, event)).json.outcome).toBe('queued')
    await setup.settle()
    expect(runs).toBe(1)
    for (const ttl of seen) {
      expect(ttl).toBeGreaterThan(0)
      expect(ttl).toBeLessThanOrEqual(400)
    }
    expect(await setup.redis.exists(lease)).toBe(0)
  })

  it('keeps the lease through a failed renewal, so events of one conversion still never overlap', async () => {
    const setup = setupFor()
    const lockDuration = 1000
    let renewals = 0
    // The Redis store, with a blip: its first renewal fails.
    const store: EventStore = {
      begin: (input) => setup.store.begin(input),
      commit: (claim) => setup.store.commit(claim),
      release: (claim) => setup.store.release(claim),
      peek: (input) => setup.store.peek(input),
      extend(claim, leaseMs) {
        if (++renewals === 1) throw new Error('blip: connection reset')
        return setup.store.extend(claim, leaseMs)
      },
    }
    const log = keptLog()
    let running = 0
    let most = 0
    const ran: string[] = []
    let newerStarted = () => {}
    const started = new Promise<void>((resolve) => {
      newerStarted = resolve
    })
    setup.startWorker({
      store,
      lockDuration,
      leaseMs: 60_000,
      logger: log,
      async onConversion(conversion: Conversion) {
        running++
        most = Math.max(most, running)
        ran.push(conversion.status)
        if (conversion.status === 'approved') {
          newerStarted()
          await sleep(3 * lockDuration)
        }
        running--
      },
    })
    const { url } = await receiver(setup)
    const [older, newer] = lifecycle(9400, ['pending', 'approved']) as [
      ConversionEvent,
      ConversionEvent,
    ]
    expect((await send(url, newer)).json.outcome).toBe('queued')
    await started
    // The older event arrives late, after the failed renewal and after the
    // first lease would have run out unrenewed.
    await sleep(1.5 * lockDuration)
    expect((await send(url, older)).json.outcome).toBe('queued')
    await setup.settle()
    expect(most).toBe(1)
    // The newer one held its conversion throughout, so the older one came too late.
    expect(ran).toEqual(['approved'])
    expect(log.lines).toEqual([])
    expect(renewals).toBeGreaterThan(2)
  }, 20_000)

  it('warns once through its logger when a running handler has lost its store lease', async () => {
    const setup = setupFor()
    const event = buildConversionEvent()
    const lease = `${setup.prefix}{c:${event.data.conversion.id}}:lease:${event.id}`
    const log = keptLog()
    setup.startWorker({
      lockDuration: 300,
      leaseMs: 60_000,
      logger: log,
      async onConversion() {
        // Gone as after an outage longer than lockDuration; several renewals fall due.
        await setup.redis.del(lease)
        await sleep(1_000)
      },
    })
    const { url } = await receiver(setup)
    expect((await send(url, event)).json.outcome).toBe('queued')
    await setup.settle()
    expect(log.lines).toHaveLength(1)
    expect(log.lines[0]).toContain(`lost the store lease of event ${event.id}`)
  })

  it('answers a repeat 200 duplicate without a new job after the completed job was removed', async () => {
    const setup = setupFor({ removeOnComplete: true })
    const calls: string[] = []
    setup.startWorker({
      onConversion: (_c: Conversion, event: ConversionEvent) => {
        calls.push(event.id)
      },
    })
    const { url } = await receiver(setup)
    const event = buildConversionEvent()
    expect((await send(url, event)).json.outcome).toBe('queued')
    await setup.settle()
    expect(await setup.queue.getJob(event.id)).toBeUndefined()
    expect(await send(url, event, { attempt: 3 })).toMatchObject({
      status: 200,
      json: { outcome: 'duplicate' },
    })
    expect(await setup.queue.getJob(event.id)).toBeUndefined()
    expect(calls).toEqual([event.id])
  })

  it('runs the older of two waiting events of one conversion first, and both', async () => {
    const setup = setupFor()
    const calls: string[] = []
    const worker = setup.startWorker({
      autorun: false,
      concurrency: 8,
      onConversion: (conversion: Conversion) => {
        calls.push(conversion.status)
      },
    })
    const { url } = await receiver(setup)
    const [created, updated] = lifecycle(9200, ['pending', 'approved']) as [object, object]
    // The newer one is queued first: FIFO alone would run it first and drop the older.
    expect((await send(url, updated)).json.outcome).toBe('queued')
    expect((await send(url, created)).json.outcome).toBe('queued')
    void worker.worker.run()
    await setup.settle()
    expect(calls).toEqual(['pending', 'approved'])
  })

  it('runs events of different conversions side by side, never two of one conversion at once', async () => {
    const setup = setupFor()
    const statuses = ['pending', 'approved', 'paid', 'reversed', 'adjusted']
    const ids = [9300, 9301, 9302, 9303]
    const running = new Map<number, number>()
    let mostOfOne = 0
    let mostConversions = 0
    const order = new Map<number, string[]>(ids.map((id) => [id, []]))
    // Handlers hold until two conversions have run side by side (or 10 s have passed,
    // and the overlap check below fails): a worker that runs everything in turn cannot pass.
    let overlapped = () => {}
    const overlap = new Promise<void>((resolve) => {
      overlapped = resolve
    })
    const giveUp = setTimeout(() => overlapped(), 10_000)
    cleanup.push(async () => clearTimeout(giveUp))
    setup.startWorker({
      concurrency: 8,
      async onConversion(conversion: Conversion) {
        running.set(conversion.id, (running.get(conversion.id) ?? 0) + 1)
        mostOfOne = Math.max(mostOfOne, running.get(conversion.id) as number)
        const conversionsNow = [...running.values()].filter((n) => n > 0).length
        mostConversions = Math.max(mostConversions, conversionsNow)
        if (conversionsNow >= 2) overlapped()
        await overlap
        // A while at work, so that a second event of this conversion would be seen here.
        await new Promise((resolve) => setTimeout(resolve, 20))
        order.get(conversion.id)?.push(conversion.status)
        running.set(conversion.id, (running.get(conversion.id) as number) - 1)
      },
    })
    const { url } = await receiver(setup)
    const events = ids.flatMap((id) => lifecycle(id, statuses))
    const answers = await Promise.all(events.map((event) => send(url, event)))
    for (const answer of answers) expect([200]).toContain(answer.status)
    await setup.settle()
    expect(mostOfOne, 'events of one conversion at once').toBe(1)
    expect(mostConversions, 'conversions running at once').toBeGreaterThanOrEqual(2)
    for (const [id, ran] of order) {
      // Every event ran unless a newer one had already run (then it was stale), in order.
      expect(ran, `conversion ${id}`).toEqual(statuses.filter((s) => ran.includes(s)))
      expect(ran.at(-1), `conversion ${id}`).toBe('adjusted')
    }
  })

  it('fails a job that is not a webhook event with a clear error, once, and keeps working', async () => {
    const setup = setupFor()
    const calls: string[] = []
    setup.startWorker({
      onConversion: (_c: Conversion, event: ConversionEvent) => {
        calls.push(event.id)
      },
    })
    await setup.queue.add(
      'conversion.created',
      { event: { id: 'not-an-event' }, attempt: 1, signedAt: 1 },
      {
        jobId: 'evt_bogus',
        attempts: 5,
      },
    )
    const { url } = await receiver(setup)
    const event = buildConversionEvent()
    expect((await send(url, event)).json.outcome).toBe('queued')
    await setup.settle()
    const [failed, ...rest] = await failedJobs(setup.queue)
    expect(rest).toEqual([])
    expect(failed).toMatchObject({ jobId: 'evt_bogus', attemptsMade: 1 })
    expect(failed?.error).toMatch(
      /^job evt_bogus is not a verified webhook event: .*id must be a string starting with evt_/,
    )
    expect(calls).toEqual([event.id])
  })

  it('keeps a job that failed every try in the failed set with its error; a new delivery or a retry runs it', async () => {
    const setup = setupFor({ attempts: 3 })
    let fail = true
    const calls: string[] = []
    setup.startWorker({
      onConversion: (_c: Conversion, event: ConversionEvent) => {
        calls.push(event.id)
        if (fail) throw new Error('ledger offline')
      },
    })
    const { url } = await receiver(setup)
    const event = buildConversionEvent({ conversion: { id: 9400 } })
    expect((await send(url, event)).json.outcome).toBe('queued')
    await setup.settle()
    expect(await failedJobs(setup.queue)).toEqual([
      expect.objectContaining({
        jobId: event.id,
        eventId: event.id,
        conversionId: 9400,
        attemptsMade: 3,
        error: 'ledger offline',
      }),
    ])
    // A new delivery of a job that failed for good starts it again: answering
    // `queued` while it sat in the failed set would end the service's retries.
    fail = false
    expect((await send(url, event, { attempt: 2 })).json.outcome).toBe('queued')
    await setup.settle()
    expect(calls).toHaveLength(4)
    expect(await queueStats(setup.queue)).toMatchObject({ failed: 0, completed: 1 })
    // The CLI's retry does the same for a job no delivery comes back for.
    fail = true
    const other = buildConversionEvent({ conversion: { id: 9401 } })
    expect((await send(url, other)).json.outcome).toBe('queued')
    await setup.settle()
    expect(await queueStats(setup.queue)).toMatchObject({ failed: 1 })
    fail = false
    expect(await retryFailed(setup.queue, { jobId: other.id })).toBe(1)
    await setup.settle()
    expect(calls).toHaveLength(8)
    expect(await queueStats(setup.queue)).toMatchObject({ failed: 0, completed: 2 })
    expect(await retryFailed(setup.queue, 'all')).toBe(0)
  })

  it('answers 503 queue_unavailable when Redis cannot take the job, and queues nothing unverified', async () => {
    const setup = setupFor()
    const port = await freePort()
    const down = bullmqHandoff({
      connection: { host: '127.0.0.1', port, retryStrategy: () => 200 },
      queueName: setup.queueName,
      timeoutMs: 500,
    })
    cleanup.push(down.close)
    const { url } = await receiver(setup, { queue: down })
    const answer = await send(url, buildConversionEvent())
    expect(answer).toMatchObject({ status: 503, json: { error: { code: 'queue_unavailable' } } })
    const good = await receiver(setup)
    const tampered = await send(good.url, buildConversionEvent(), { tamper: (b) => `${b} ` })
    expect(tampered.status).toBe(401)
    expect(await queueStats(setup.queue)).toMatchObject({ waiting: 0, completed: 0, failed: 0 })
  })
})

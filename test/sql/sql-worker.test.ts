/**
 * Slow handlers behind the BullMQ hand-off keep the guarantee, on every SQL
 * store and driver: a worker SIGKILLed after its handler wrote the effect and before the
 * commit, leaves nothing; BullMQ hands the stalled job to another worker, whose
 * run is the one effect row.
 */
import { type ChildProcess, fork } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { once } from 'node:events'
import { bullmqHandoff } from '@affiliate-webhooks/bullmq'
import { createReceiver } from '@affiliate-webhooks/core'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import { Queue } from 'bullmq'
import { afterAll, describe, expect, it } from 'vitest'
import { drained } from '../queue/queue-harness.js'
import { REDIS_URL } from '../support/redis-servers.js'
import { type EffectsDatabase, SECRET, SQL_KINDS } from './sql-stores.js'

describe.each(SQL_KINDS)('a BullMQ worker with the $name store, SIGKILLed mid-job', (kind) => {
  const id = randomUUID().slice(0, 8)
  const QUEUE = `aw-sql-${id}`
  const PREFIX = `aw-sql-${id}`
  const { hostname, port } = new URL(REDIS_URL)
  const connection = { host: hostname, port: Number(port || 6379) }
  const children: ChildProcess[] = []
  const queue = new Queue(QUEUE, { connection, prefix: PREFIX })
  const handoff = bullmqHandoff({ connection, queueName: QUEUE, prefix: PREFIX })
  let db: EffectsDatabase | undefined

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL')
    await handoff.close()
    await queue.obliterate({ force: true }).catch(() => {})
    await queue.close()
    await db?.drop()
  })

  async function startWorker(env: Record<string, string>) {
    const child = fork(new URL('./sql-worker.mjs', import.meta.url), {
      env: {
        ...process.env,
        ...kind.env,
        STORE: kind.store,
        REDIS_URL,
        DATABASE_URL: db?.url,
        QUEUE,
        PREFIX,
        ...env,
      },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    children.push(child)
    const effect = new Promise<string>((resolve) => {
      child.on('message', (message: { effect?: string }) => {
        if (message.effect) resolve(message.effect)
      })
    })
    await once(child, 'message')
    return { child, effect }
  }

  it('applies the effect exactly once', async () => {
    db = await kind.createDatabase()
    const receiver = createReceiver({ secret: SECRET, queue: handoff })
    const event = buildConversionEvent({ conversion: { id: 5151 } })
    const signed = await signedDelivery({ secret: SECRET, event })
    const answer = await receiver.receive({
      headers: signed.headers,
      rawBody: new TextEncoder().encode(signed.body),
    })
    expect(answer.outcome).toBe('queued')

    const first = await startWorker({ AFTER_FIRST_EFFECT: 'hang' })
    expect(await first.effect).toBe(event.id)
    const exited = once(first.child, 'exit')
    first.child.kill('SIGKILL')
    await exited

    await startWorker({})
    await drained(queue, 60_000)
    const job = await queue.getJob(event.id)
    expect(await job?.getState()).toBe('completed')
    expect(job?.returnvalue).toBe('processed')
    const rows = await db.rows<{ pid: number }>('SELECT pid FROM effects WHERE event_id = $1', [
      event.id,
    ])
    expect(rows.length).toBe(1)
  })
})

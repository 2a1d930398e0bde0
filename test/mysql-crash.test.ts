/**
 * The crash issue 19 exists for, against real processes and the machine's
 * MariaDB: a receiver whose handler wrote its effect row through ctx.tx is
 * SIGKILLed before its commit; the service's retry reaches a new process; the
 * effect is there exactly once. And a handler that throws leaves no row; its
 * retry leaves one. The receivers import the built packages: `npm run build` first.
 */
import { type ChildProcess, fork } from 'node:child_process'
import { once } from 'node:events'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMysqlTestDatabase, type MysqlTestDatabase } from './mysql-db.js'
import { freePort } from './redis-servers.js'

const SECRET = 'whsec_mysql_crash_test'
const TABLE = 'effects'

let db: MysqlTestDatabase
const children = new Set<ChildProcess>()

beforeAll(async () => {
  db = await createMysqlTestDatabase()
  // No unique key on event_id: a second application of an event shows as a second row.
  await db.pool.query(
    `CREATE TABLE ${TABLE} (id INT AUTO_INCREMENT PRIMARY KEY, event_id VARCHAR(255) NOT NULL, conversion_id BIGINT NOT NULL, pid INT NOT NULL) ENGINE=InnoDB`,
  )
})

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL')
  await db?.drop()
})

interface Receiver {
  child: ChildProcess
  pid: number
  port: number
  effects: string[]
}

async function startReceiver(mode: 'hang' | 'throw-once' | 'ok'): Promise<Receiver> {
  const port = await freePort()
  const child = fork(new URL('./mysql-crash-receiver.mjs', import.meta.url), {
    env: {
      ...process.env,
      DATABASE_URL: db.url,
      WEBHOOK_SECRET: SECRET,
      PORT: String(port),
      LEASE_MS: '30000',
      EFFECTS_TABLE: TABLE,
      MODE: mode,
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  children.add(child)
  child.once('exit', () => children.delete(child))
  const receiver: Receiver = { child, pid: 0, port, effects: [] }
  child.on('message', (message: { effect?: string }) => {
    if (message.effect !== undefined) receiver.effects.push(message.effect)
  })
  const [ready] = (await once(child, 'message')) as [{ pid: number }]
  receiver.pid = ready.pid
  return receiver
}

async function post(port: number, event: object, attempt: number) {
  const signed = await signedDelivery({ secret: SECRET, event, attempt })
  const response = await fetch(`http://127.0.0.1:${port}/hooks`, {
    method: 'POST',
    headers: signed.headers,
    body: signed.body,
  })
  return { status: response.status, body: await response.text() }
}

/** As the service does: retry until a 2xx (409 and 5xx are retried), within `withinMs`. */
async function deliverUntilOk(
  port: number,
  event: object,
  firstAttempt: number,
  withinMs = 10_000,
) {
  const deadline = Date.now() + withinMs
  const statuses: number[] = []
  for (let attempt = firstAttempt; ; attempt++) {
    const answer = await post(port, event, attempt)
    statuses.push(answer.status)
    if (answer.status < 300 || Date.now() > deadline) return { ...answer, statuses }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

const rowsOf = async (eventId: string) => {
  const [rows] = await db.pool.query(`SELECT pid FROM ${TABLE} WHERE event_id = ?`, [eventId])
  return (rows as { pid: number }[]).map((row) => row.pid)
}

const until = async (check: () => boolean, what: string) => {
  const deadline = Date.now() + 10_000
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

describe('mysqlStore across a SIGKILL mid-handler', () => {
  it('a receiver killed after its effect, before its commit: the retry on a new process applies it exactly once', async () => {
    const doomed = await startReceiver('hang')
    const event = buildConversionEvent({ conversion: { id: 9001, commission: '12.50' } })
    const hung = post(doomed.port, event, 1).catch((error: Error) => error)
    await until(() => doomed.effects.includes(event.id), 'the effect of the first attempt')
    // Written in the open transaction: nobody else sees it.
    expect(await rowsOf(event.id)).toEqual([])
    const exited = once(doomed.child, 'exit')
    doomed.child.kill('SIGKILL')
    await exited
    // The service sees its request fail (no answer) and retries.
    expect(await hung).toBeInstanceOf(Error)

    const next = await startReceiver('ok')
    const retry = await deliverUntilOk(next.port, event, 2)
    expect(retry.status).toBe(200)
    expect(next.effects).toEqual([event.id])
    expect(await rowsOf(event.id)).toEqual([next.pid])
    // A further retry (the service never saw the 200, say) is a duplicate: still one row.
    const again = await post(next.port, event, 3)
    expect(again.status).toBe(200)
    expect(next.effects).toEqual([event.id])
    expect(await rowsOf(event.id)).toEqual([next.pid])
    next.child.kill('SIGKILL')
  })

  it('a handler that throws after writing its effect leaves no row (500); its retry leaves one', async () => {
    const receiver = await startReceiver('throw-once')
    const event = buildConversionEvent({ conversion: { id: 9002 } })
    const first = await post(receiver.port, event, 1)
    expect(first.status).toBe(500)
    expect(receiver.effects).toEqual([event.id])
    expect(await rowsOf(event.id)).toEqual([])
    const retry = await post(receiver.port, event, 2)
    expect(retry.status).toBe(200)
    expect(receiver.effects).toEqual([event.id, event.id])
    expect(await rowsOf(event.id)).toEqual([receiver.pid])
    receiver.child.kill('SIGKILL')
  })
})

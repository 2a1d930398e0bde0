/**
 * postgres.js when the guard misses a statement: transactionControl is made
 * blind to texts marked unseen, as a gap in it would be. A ROLLBACK the
 * handler sends then reaches the server; the delivery's reserved connection
 * still serves no one else, and the held check answers it 500 handler_failed.
 */
import { randomUUID } from 'node:crypto'
import { createReceiver } from '@affiliate-webhooks/core'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import { postgresStore } from '@affiliate-webhooks/postgres'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createPostgresTestDatabase, type TestDatabase } from '../support/postgres-db.js'

vi.mock('@affiliate-webhooks/core/internal', async (importOriginal) => {
  const real = await importOriginal<typeof import('@affiliate-webhooks/core/internal')>()
  return {
    ...real,
    transactionControl: (text: string, dialect: 'postgres' | 'mysql' | 'sqlite') =>
      text.includes('/* unseen */') ? undefined : real.transactionControl(text, dialect),
  }
})

let db: TestDatabase
let sql: postgres.Sql
beforeAll(async () => {
  db = await createPostgresTestDatabase()
  sql = postgres(db.url, { max: 4, onnotice: () => {} })
})
afterAll(async () => {
  await sql.end({ timeout: 1 })
  await db.drop()
})

function gate() {
  let open!: () => void
  const opened = new Promise<void>((resolve) => {
    open = resolve
  })
  return { open, opened }
}

describe('postgresStore (postgres.js): a ROLLBACK the guard does not see', () => {
  it("is the handler's 500 at commit, and another delivery on the same two connections commits its own row once", async () => {
    const small = postgres(db.url, { max: 2, onnotice: () => {} })
    const secret = 'whsec_postgresjs_gap'
    const table = `gap_${randomUUID().slice(0, 8)}`
    await sql.unsafe(`CREATE TABLE ${table} (event_id text NOT NULL)`)
    const cHeld = gate()
    const cEntered = gate()
    const aEnded = gate()
    const aGo = gate()
    const bEntered = gate()
    const bGo = gate()
    const calls = new Map<string, number>()
    const receiver = createReceiver({
      secret,
      logger: false,
      answerWithinMs: 20_000,
      store: postgresStore({ sql: small, logger: false }),
      async onConversion(conversion, event, ctx) {
        calls.set(event.id, (calls.get(event.id) ?? 0) + 1)
        await ctx.tx.unsafe(`INSERT INTO ${table} VALUES ($1)`, [event.id])
        if (conversion.id === 93_001) {
          cEntered.open()
          await cHeld.opened
        } else if (conversion.id === 93_002) {
          await ctx.tx.unsafe('/* unseen */ ROLLBACK')
          aEnded.open()
          await aGo.opened
        } else {
          bEntered.open()
          await bGo.opened
        }
      },
    })
    const send = async (event: object) => {
      const signed = await signedDelivery({ secret, event })
      return receiver.receive({
        headers: signed.headers,
        rawBody: new TextEncoder().encode(signed.body),
      })
    }
    const c = buildConversionEvent({ conversion: { id: 93_001 } })
    const a = buildConversionEvent({ conversion: { id: 93_002 } })
    const b = buildConversionEvent({ conversion: { id: 93_003 } })
    try {
      const cAnswer = send(c)
      await cEntered.opened
      const aAnswer = send(a)
      await aEnded.opened
      // With sql.begin, B would get A's connection now (idle after A's ROLLBACK).
      const bAnswer = send(b)
      await Promise.race([bEntered.opened, new Promise((resolve) => setTimeout(resolve, 300))])
      aGo.open()
      const aResult = await aAnswer
      bGo.open()
      const bResult = await bAnswer
      cHeld.open()
      const cResult = await cAnswer
      const rows = async (id: string) =>
        Number(
          (await sql.unsafe(`SELECT count(*) AS n FROM ${table} WHERE event_id = $1`, [id]))[0]?.n,
        )
      expect({
        a: [aResult.status, aResult.error?.code, await rows(a.id)],
        b: [bResult.status, bResult.outcome, await rows(b.id), calls.get(b.id)],
        c: [cResult.status, cResult.outcome, await rows(c.id)],
      }).toEqual({
        a: [500, 'handler_failed', 0],
        b: [200, 'processed', 1, 1],
        c: [200, 'processed', 1],
      })
      expect(aResult.error?.message).toMatch(
        /the handler ended the delivery's transaction itself on ctx\.tx .*the service's retry runs the handler again/,
      )
    } finally {
      aGo.open()
      bGo.open()
      cHeld.open()
      await small.end({ timeout: 1 })
    }
  }, 30_000)
})

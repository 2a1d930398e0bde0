/**
 * What one row per conversion promises beyond the shared store contract, run
 * on the Postgres and the MySQL store alike: a settled event is answered at
 * once even while a newer event holds its conversion's row; first events of a
 * new conversion racing each other; a duplicate of an event still running
 * waits at most lockWaitMs, then in_progress.
 */
import { randomUUID } from 'node:crypto'
import type { BeginResult, Claim, EventStore } from '@affiliate-webhooks/core'
import { describe, expect, it } from 'vitest'

export type SqlStoreFactory = (options: { lockWaitMs?: number }) => Promise<EventStore<unknown>>

function claimed(result: BeginResult<unknown>): Claim<unknown> {
  if (result.status !== 'claimed') throw new Error(`expected claimed, got ${result.status}`)
  return result.claim
}

/** A begin() and how long it took to answer, ms. */
async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now()
  const value = await work()
  return { value, ms: performance.now() - started }
}

/** Whether a promise has settled yet, without waiting for it. */
function track<T>(promise: Promise<T>) {
  const state = { settled: false, promise }
  promise.then(
    () => {
      state.settled = true
    },
    () => {
      state.settled = true
    },
  )
  return state
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export function sqlStoreCases(name: string, factory: SqlStoreFactory): void {
  const run = randomUUID().slice(0, 8)
  let n = 0
  const eventId = () => `evt_row_${run}_${++n}`
  const conversionId = () => 3_000_000_000 + Math.floor(Math.random() * 1_000_000_000)

  describe(`${name}: one row per conversion`, () => {
    it('answers a committed duplicate and an older event at once while a newer event of the conversion holds the row', async () => {
      const store = await factory({ lockWaitMs: 5000 })
      const conversion = conversionId()
      const first = eventId()
      const done = claimed(
        await store.begin({ eventId: first, conversionId: conversion, order: 1000 }),
      )
      expect(await store.commit(done)).toBe(true)
      const newer = claimed(
        await store.begin({ eventId: eventId(), conversionId: conversion, order: 2000 }),
      )
      // lockWaitMs is 5 s: answers well inside it did not wait for the newer event's row.
      const duplicate = await timed(() =>
        Promise.resolve(store.begin({ eventId: first, conversionId: conversion, order: 1000 })),
      )
      expect(duplicate.value).toEqual({ status: 'duplicate' })
      expect(duplicate.ms).toBeLessThan(1000)
      const older = await timed(() =>
        Promise.resolve(store.begin({ eventId: eventId(), conversionId: conversion, order: 500 })),
      )
      expect(older.value).toEqual({ status: 'stale' })
      expect(older.ms).toBeLessThan(1000)
      expect(await store.commit(newer)).toBe(true)
    })

    it('lets one of two first events of a new conversion claim; the other follows its commit in order', async () => {
      const store = await factory({ lockWaitMs: 5000 })
      for (const [a, b] of [
        [1000, 2000],
        [2000, 1000],
      ] as const) {
        const conversion = conversionId()
        const both = [a, b].map((order) =>
          track(
            Promise.resolve(store.begin({ eventId: eventId(), conversionId: conversion, order })),
          ),
        )
        // One claims at once; the other waits for the winner's row.
        const winner = await Promise.race(both.map((entry) => entry.promise))
        const winnerClaim = claimed(winner)
        await sleep(100)
        const loser = both.find((entry) => entry.promise !== undefined && !entry.settled)
        expect(loser, 'the second first event waits for the row').toBeDefined()
        expect(await store.commit(winnerClaim)).toBe(true)
        const verdict = await (loser as (typeof both)[number]).promise
        if (winnerClaim.order < Math.max(a, b)) {
          expect(await store.commit(claimed(verdict))).toBe(true)
        } else {
          expect(verdict).toEqual({ status: 'stale' })
        }
      }
    })

    it('answers the same first event delivered twice at once: claimed, then duplicate after the commit or claimed after a release', async () => {
      const store = await factory({ lockWaitMs: 5000 })
      for (const end of ['commit', 'release'] as const) {
        const conversion = conversionId()
        const id = eventId()
        const deliveries = [0, 1].map(() =>
          track(Promise.resolve(store.begin({ eventId: id, conversionId: conversion, order: 7 }))),
        )
        const first = claimed(await Promise.race(deliveries.map((entry) => entry.promise)))
        await sleep(100)
        const second = deliveries.find((entry) => !entry.settled)
        expect(second, 'the second delivery waits for the first').toBeDefined()
        if (end === 'commit') {
          expect(await store.commit(first)).toBe(true)
          expect(await (second as (typeof deliveries)[number]).promise).toEqual({
            status: 'duplicate',
          })
        } else {
          await store.release(first)
          expect(
            await store.commit(claimed(await (second as (typeof deliveries)[number]).promise)),
          ).toBe(true)
        }
      }
    })

    it('answers a duplicate of an event whose first delivery still runs in_progress within lockWaitMs', async () => {
      const lockWaitMs = 1000
      const store = await factory({ lockWaitMs })
      for (const conversion of [conversionId(), undefined]) {
        const id = eventId()
        const running = claimed(
          await store.begin({ eventId: id, conversionId: conversion, order: 9 }),
        )
        const again = await timed(() =>
          Promise.resolve(store.begin({ eventId: id, conversionId: conversion, order: 9 })),
        )
        expect(again.value).toEqual({ status: 'in_progress' })
        // It waited for the running delivery, and no longer than lockWaitMs (and a round trip).
        expect(again.ms).toBeGreaterThanOrEqual(lockWaitMs - 50)
        expect(again.ms).toBeLessThan(lockWaitMs + 750)
        expect(await store.commit(running)).toBe(true)
        expect(await store.begin({ eventId: id, conversionId: conversion, order: 9 })).toEqual({
          status: 'duplicate',
        })
      }
    })
  })
}

/**
 * End to end: every adapter of this project, started as its README says, receives
 * conversions from the emulator: verified, de-duplicated, ordered, with retries,
 * and through a disable / re-enable cycle of the endpoint.
 */
import type { Conversion } from '@affiliate-webhooks/core'
import { memoryStore } from '@affiliate-webhooks/core'
import { afterEach, describe, expect, it } from 'vitest'
import { adapters, type Running } from '../support/conformance-adapters.js'
import {
  conversion,
  type Harness,
  startEmulator,
  WHOLE_SCHEDULE_MS,
} from '../support/emulator-harness.js'

let harness: Harness | undefined
let running: Running | undefined
afterEach(async () => {
  await running?.close()
  await harness?.close()
  running = undefined
  harness = undefined
})

describe.each(adapters)('emulator -> $name', (adapter) => {
  it('delivers a stream of conversions; the receiver ends with the newest status of each, through retries, replays and a disable / re-enable cycle', async () => {
    const h = await startEmulator()
    harness = h
    // Registered first: the adapter needs the secret the service hands out.
    const endpoint = await h.register('http://127.0.0.1:9/hooks')
    const table = new Map<number, string>()
    const handled: string[] = []
    const outcomes = { duplicate: 0, stale: 0 }
    // Handler failures to come, per conversion id (its first event fails this many times).
    const failures = new Map<number, number>()
    const start = async () => {
      running = await adapter.start({
        secret: endpoint.secret,
        store,
        onConversion(c: Conversion, event) {
          const left = failures.get(c.id) ?? 0
          if (left > 0) {
            failures.set(c.id, left - 1)
            throw new Error('handler failed')
          }
          handled.push(event.id)
          table.set(c.id, c.status)
        },
        onDuplicate: () => {
          outcomes.duplicate++
        },
        onStale: () => {
          outcomes.stale++
        },
      })
      const patched = await h.call('PATCH', `/v1/webhooks/${endpoint.id}`, {
        body: { url: running.url },
      })
      expect(patched.status).toBe(200)
    }
    const store = memoryStore()
    await start()
    const emit = async (id: number, status: string) =>
      (await h.call('POST', '/emulator/conversions', { body: conversion(id, status) })).body.data

    // A lifecycle per conversion. Conversion 1's first event fails once; its retry (at
    // +1 min) comes after the newer `approved` event, so the receiver skips it as stale.
    // Conversion 3's first event fails twice and is handled at the third attempt.
    failures.set(1, 1)
    failures.set(3, 2)
    const first = await emit(1, 'pending')
    await h.advance(0)
    await emit(2, 'pending')
    const approved = await emit(1, 'approved')
    await h.advance(10 * 60_000)
    await emit(1, 'available')
    await emit(2, 'rejected')
    expect((await emit(2, 'rejected')).event).toBeNull()
    const third = await emit(3, 'pending')
    await h.advance(WHOLE_SCHEDULE_MS)
    expect(Object.fromEntries(table)).toEqual({ 1: 'available', 2: 'rejected', 3: 'pending' })
    expect(outcomes.stale).toBe(1)
    const log = (await h.call('GET', '/emulator/log')).body.data as {
      eventId: string
      attempt: number
      ok: boolean
    }[]
    const attemptsOf = (eventId: string) =>
      log.filter((e) => e.eventId === eventId).map((e) => [e.attempt, e.ok])
    expect(attemptsOf(first.event.id)).toEqual([
      [1, false],
      [2, true],
    ])
    expect(attemptsOf(third.event.id)).toEqual([
      [1, false],
      [2, false],
      [3, true],
    ])
    const deliveries = (await h.call('GET', `/v1/webhooks/${endpoint.id}/deliveries?size=100`)).body
      .data
    expect(deliveries.every((d: { status: string }) => d.status === 'succeeded')).toBe(true)

    // Replays: the same event again is a duplicate; an older event of a conversion is not applied.
    const olderDelivery = approved.deliveries[0].id
    expect(
      (await h.call('POST', `/v1/webhooks/${endpoint.id}/deliveries/${olderDelivery}/replay`))
        .status,
    ).toBe(202)
    await h.advance(0)
    expect(outcomes.duplicate).toBe(1)
    expect(table.get(1)).toBe('available')
    expect(new Set(handled).size).toBe(handled.length)

    // The receiver goes away: 20 failed attempts in a row disable the endpoint.
    await running?.close()
    running = undefined
    const lost = [await emit(10, 'pending'), await emit(11, 'pending'), await emit(12, 'pending')]
    await h.advance(WHOLE_SCHEDULE_MS)
    const disabled = (await h.call('GET', `/v1/webhooks/${endpoint.id}`)).body.data
    expect(disabled).toMatchObject({ status: 'disabled', consecutiveFailures: 20 })
    expect((await emit(13, 'pending')).deliveries).toEqual([])

    // Back up, re-enabled: new events flow, and the lost ones come back by replay.
    await start()
    expect(await h.patch(endpoint.id, { status: 'active' })).toMatchObject({
      status: 'active',
      consecutiveFailures: 0,
    })
    await emit(14, 'approved')
    for (const {
      deliveries: [delivery],
    } of lost) {
      const replay = await h.call(
        'POST',
        `/v1/webhooks/${endpoint.id}/deliveries/${delivery.id}/replay`,
      )
      expect(replay.status).toBe(202)
    }
    await h.advance(WHOLE_SCHEDULE_MS)
    expect(Object.fromEntries(table)).toEqual({
      1: 'available',
      2: 'rejected',
      3: 'pending',
      10: 'pending',
      11: 'pending',
      12: 'pending',
      14: 'approved',
    })
    const final = (await h.call('GET', `/v1/webhooks/${endpoint.id}`)).body.data
    expect(final).toMatchObject({ status: 'active', consecutiveFailures: 0 })
  })
})

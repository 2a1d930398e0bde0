/**
 * What the chaos tests assert about a run, from the simulator's report and the
 * receiver's log of handler effects.
 */
import type { SimulationReport } from '@affiliate-webhooks/emulator/internal'
import { expect } from 'vitest'

export interface Effects {
  /** Every handler effect, by event id: how many times it was applied. */
  applied: Map<string, number>
  /** The receiver's conversions table: conversion id -> `createdAt|status` of its last write. */
  state: Map<number, string>
  /** Per conversion, the createdAt of each effect in the order they were applied. */
  order: Map<number, string[]>
}

/** Per conversion, the events' ids and createdAt, oldest first. */
function eventsByConversion(report: SimulationReport) {
  const byConversion = new Map<number, { id: string; createdAt: string }[]>()
  for (const event of report.events) {
    const list = byConversion.get(event.data.conversion.id) ?? []
    list.push({ id: event.id, createdAt: event.createdAt })
    byConversion.set(event.data.conversion.id, list)
  }
  for (const list of byConversion.values())
    list.sort((a, b) => a.createdAt.localeCompare(b.createdAt))
  return byConversion
}

/**
 * Every delivery ended succeeded; no event's effect was applied more often than
 * `allowedTwice` permits (once, unless the test proves why a second run was
 * legitimate); the newest event of every conversion was applied; an event that
 * was never applied is older than an applied one of its conversion (skipped as
 * stale, never lost); each conversion ends in its newest event's status.
 */
export function expectExactlyOnceAndNewestWins(
  report: SimulationReport,
  effects: Effects,
  allowedTwice: ReadonlySet<string> = new Set(),
): void {
  const { deliveries, stats } = report
  expect(
    report.failed.map(
      (d) => `${d.eventId}: ${d.attempts.at(-1)?.errorMessage ?? d.attempts.at(-1)?.responseBody}`,
    ),
  ).toEqual([])
  expect(stats.deliveries.succeeded).toBe(stats.deliveries.total)
  expect(stats.notQueued).toBe(0)
  expect(stats.endpoint.status).toBe('active')
  expect(report.ok).toBe(true)
  expect(deliveries.length).toBe(report.events.length)

  const overApplied = [...effects.applied].filter(
    ([id, count]) => count > (allowedTwice.has(id) ? 2 : 1),
  )
  expect(overApplied, 'events whose effect was applied too often').toEqual([])

  for (const [conversionId, events] of eventsByConversion(report)) {
    const newest = events.at(-1) as { id: string; createdAt: string }
    expect(
      effects.applied.get(newest.id),
      `newest event of ${conversionId}`,
    ).toBeGreaterThanOrEqual(1)
    let newestApplied = ''
    for (const event of events) {
      if ((effects.applied.get(event.id) ?? 0) > 0) newestApplied = event.createdAt
    }
    for (const event of events) {
      if ((effects.applied.get(event.id) ?? 0) > 0) continue
      // Skipped: only ever because a newer event of the conversion was applied first.
      expect(event.createdAt < newestApplied, `${event.id} of ${conversionId} was lost`).toBe(true)
    }
  }
  for (const [conversionId, applied] of effects.order) {
    // Never an older status after a newer one (equal only for a legitimate second run).
    expect(applied, `conversion ${conversionId} went backwards`).toEqual([...applied].sort())
  }
  for (const expected of report.expected) {
    expect(effects.state.get(expected.conversionId), `conversion ${expected.conversionId}`).toBe(
      `${expected.createdAt}|${expected.status}`,
    )
  }
}

/** The run really was chaotic: retries after failures, duplicates, stale arrivals. */
export function expectChaos(report: SimulationReport): void {
  const { outcomes } = report.stats
  expect(outcomes.processed ?? 0).toBeGreaterThan(0)
  expect(outcomes.handler_failed ?? 0, 'handler failures answered 500').toBeGreaterThan(0)
  expect(outcomes.duplicate ?? 0, 'duplicates answered as such').toBeGreaterThan(0)
  expect(outcomes.stale ?? 0, 'older events after newer ones').toBeGreaterThan(0)
  expect(report.stats.replays).toBeGreaterThan(0)
  expect(report.heldBack).toBeGreaterThan(0)
}

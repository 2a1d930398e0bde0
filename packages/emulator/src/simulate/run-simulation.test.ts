import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runSimulation } from './run-simulation.js'

const SECRET = 'whsec_run_simulation'

/** A receiver that acknowledges everything and logs the order events arrive in. */
const arrivals: { id: string; conversionId: number; createdAt: string; attempt: string }[] = []
let url: string
const server = createServer((req, res) => {
  let body = ''
  req.setEncoding('utf8').on('data', (chunk: string) => {
    body += chunk
  })
  req.on('end', () => {
    const event = JSON.parse(body) as {
      id: string
      createdAt: string
      data: { conversion: { id: number } }
    }
    arrivals.push({
      id: event.id,
      conversionId: event.data.conversion.id,
      createdAt: event.createdAt,
      attempt: String(req.headers['service-delivery-attempt']),
    })
    res.writeHead(200).end('{"received":true,"outcome":"processed"}')
  })
})
beforeAll(async () => {
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
})
afterAll(() => {
  server.closeAllConnections()
  server.close()
})

const options = { url: '', secret: SECRET, timeScale: 36_000, concurrency: 4, seed: 11 }

describe('runSimulation', () => {
  it('delivers every event of every lifecycle once when nothing is duplicated or reordered', async () => {
    arrivals.length = 0
    const report = await runSimulation({ ...options, url, conversions: 20 })
    expect(report.ok).toBe(true)
    expect(report.stats.deliveries.succeeded).toBe(report.events.length)
    expect(arrivals.map((a) => a.id).sort()).toEqual(report.events.map((e) => e.id).sort())
    expect(report.heldBack).toBe(0)
    expect(report.stats.replays).toBe(0)
    expect(report.expected).toHaveLength(20)
  })

  it('with --reorder 1 sends every event but the last of a conversion after a newer one', async () => {
    const report = await runSimulation({ ...options, url, conversions: 10, reorder: 1 })
    expect(report.heldBack).toBe(report.events.length - 10)
    const firstSent = new Map(
      report.deliveries.map((d) => [d.eventId, d.attempts[0]?.sequence ?? Number.NaN]),
    )
    for (const conversion of report.expected) {
      const events = report.events
        .filter((e) => e.data.conversion.id === conversion.conversionId)
        .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
      for (let step = 0; step < events.length - 1; step++) {
        // Each event was first sent after the next (newer) one of its conversion.
        const older = firstSent.get(events[step]?.id as string) as number
        const newer = firstSent.get(events[step + 1]?.id as string) as number
        expect(older).toBeGreaterThan(newer)
      }
    }
  })

  it('with --duplicates 1 sends every event again, as a replay after it succeeded', async () => {
    arrivals.length = 0
    const report = await runSimulation({ ...options, url, conversions: 8, duplicates: 1 })
    expect(report.stats.replays).toBe(report.events.length)
    expect(arrivals).toHaveLength(2 * report.events.length)
    for (const delivery of report.deliveries) {
      expect(delivery.attempts.map((a) => `${a.round}:${a.attempt}:${a.ok}`)).toEqual([
        '0:1:true',
        '1:1:true',
      ])
    }
  })

  it('stops when the signal aborts and says so', async () => {
    const controller = new AbortController()
    const running = runSimulation({
      ...options,
      url,
      conversions: 5,
      timeScale: 1,
      signal: controller.signal,
    })
    controller.abort()
    const report = await running
    expect(report.aborted).toBe(true)
    expect(report.ok).toBe(false)
  })

  it('refuses rates outside 0..1 and a negative number of conversions', async () => {
    await expect(runSimulation({ ...options, url, conversions: 1, duplicates: 2 })).rejects.toThrow(
      /duplicates/,
    )
    await expect(runSimulation({ ...options, url, conversions: -1 })).rejects.toThrow(/conversions/)
  })

  it('takes disableAfterFailures as a whole number >= 1 or Infinity, and refuses anything else', async () => {
    for (const bad of [0, -1, 2.5, Number.NaN]) {
      await expect(
        runSimulation({ ...options, url, conversions: 1, disableAfterFailures: bad }),
      ).rejects.toThrow(/`disableAfterFailures` must be a whole number >= 1, or Infinity/)
    }
    const report = await runSimulation({
      ...options,
      url,
      conversions: 2,
      disableAfterFailures: Number.POSITIVE_INFINITY,
    })
    expect(report.ok).toBe(true)
    expect(report.settings.disableAfterFailures).toBe(Number.POSITIVE_INFINITY)
  })
})

/**
 * The hostile-input list (test/support/hostile-cases.ts) against every adapter,
 * over raw loopback sockets: stalls, trickles, lying lengths, disconnects, each
 * alone and as a flood, handlers that hang, an event from the future. Each
 * asserts the answer, its time bound (with a generous margin for a shared
 * machine), the handler's calls and how many lines were logged.
 */

import { afterEach, expect, it } from 'vitest'
import type { Running } from '../support/conformance-adapters.js'
import { forEachAdapter } from '../support/conformance-cases.js'
import {
  afterTheBody,
  attacks,
  type Bounds,
  hostileOptions,
  isStreakWarning,
  runAttack,
} from '../support/hostile-cases.js'
import { hostileAdapters } from './hostile-adapters.js'

/** Short bounds keep the suite quick; the defaults are checked in the core's tests. */
const BOUNDS: Bounds = { bodyTimeoutMs: 600, answerWithinMs: 900 }
/** A shared 2-core machine under a flood of 50 sockets: answers may come this much late. */
const MARGIN_MS = 2_500
const FLOOD = 50

forEachAdapter(hostileAdapters, (adapter) => {
  const running: Running[] = []
  afterEach(async () => {
    await Promise.all(running.splice(0).map((r) => r.close()))
  })

  const list = attacks(FLOOD, 100).filter((a) => !adapter.buffersWholeBody || afterTheBody(a))
  for (const attack of list) {
    const expected = attack.expect(BOUNDS)
    const answer = expected.status === 'none' ? 'no answer' : `${expected.status} ${expected.code}`
    it(`${attack.name}: ${answer} within ${expected.withinMs} ms, ${expected.calls} handler calls, at most ${expected.maxLines} log lines`, async () => {
      const { options, calls, lines } = hostileOptions(attack.hangs === true, BOUNDS)
      const app = await adapter.start(options)
      running.push(app)
      const { got, slowestMs } = await runAttack(app.url, attack, expected.withinMs + MARGIN_MS * 2)
      for (const one of got) {
        expect({ status: one.status, code: one.code }).toEqual({
          status: expected.status,
          code: expected.status === 'none' ? undefined : expected.code,
        })
      }
      expect(slowestMs).toBeLessThan(expected.withinMs + MARGIN_MS)
      if (expected.status === 408) {
        // The rest of a late body is never read: the connection is closed.
        expect(got.filter((one) => !one.closed)).toEqual([])
      }
      if (expected.status === 408 || expected.status === 503) {
        // A deadline, not an idle check: nothing answers before it.
        expect(Math.min(...got.map((g) => g.ms))).toBeGreaterThanOrEqual(expected.withinMs - 50)
      }
      // A disconnect is only known once the server sees the socket close.
      if (expected.maxLines > 0) {
        await expect.poll(() => lines.length, { timeout: 2_000 }).toBeGreaterThanOrEqual(1)
      }
      expect(calls).toHaveLength(expected.calls)
      expect(lines.filter((line) => !isStreakWarning(line)).length).toBeLessThanOrEqual(
        expected.maxLines,
      )
      expect(lines.filter(isStreakWarning).length).toBeLessThanOrEqual(3)
      // A client's fault is a refusal (warn); only a hanging handler is the app's (error).
      if (attack.hangs !== true) {
        expect(lines.filter((line) => line.startsWith('error'))).toEqual([])
      }
    })
  }
})

import { describe, expect, it } from 'vitest'
import type { LoggedAttempt } from '../resources/emulator-controls.js'
import { loggedAttemptSeen, newLoggedAttempts } from './follow-attempts.js'

const AT = '2026-01-01T00:00:00.000Z'

/** Attempt `n` of del_1 as the emulator logs it: a 500 that leaves it retrying, or a 200. */
const logged = (n: number, ok = false): LoggedAttempt => ({
  at: `2026-01-01T00:0${n}:00.000Z`,
  webhookId: 'wh_1',
  deliveryId: 'del_1',
  eventId: 'evt_1',
  eventType: 'conversion.created',
  attempt: n,
  ok,
  responseStatus: ok ? 200 : 500,
  durationMs: 10 * n,
  errorMessage: null,
  errorCode: ok ? null : 'boom',
  outcome: ok ? 'processed' : null,
  status: ok ? 'succeeded' : 'retrying',
  nextAttemptAt: ok ? null : `2026-01-01T01:0${n}:00.000Z`,
})

/** The lines a follow prints over a sequence of looks at the log. */
function follow(looks: LoggedAttempt[][]) {
  let shown = 0
  const printed = []
  for (const log of looks) {
    const fresh = newLoggedAttempts(log, shown, AT)
    shown = fresh.shown
    printed.push(...fresh.attempts)
  }
  return printed
}

describe('newLoggedAttempts', () => {
  it('each attempt once, with its own number, answer and duration, whatever the looks see', () => {
    const one = logged(1)
    const two = logged(2)
    const three = logged(3, true)
    // Nothing yet, attempt 1, the same again (an attempt in flight), then 2 and 3 at once (a clock move).
    const printed = follow([[], [one], [one], [one, two, three], [one, two, three]])
    expect(printed.map((p) => [p.attempt, p.responseStatus, p.status, p.durationMs])).toEqual([
      [1, 500, 'retrying', 10],
      [2, 500, 'retrying', 20],
      [3, 200, 'succeeded', 30],
    ])
    expect(printed[2]).toMatchObject({ outcome: 'processed', errorCode: null, nextAttemptAt: null })
    expect(printed[0]).toMatchObject({ errorCode: 'boom', nextAttemptAt: one.nextAttemptAt })
  })

  it('attempt 1 is not lost when the first look finds several made already', () => {
    const printed = follow([
      [logged(1), logged(2)],
      [logged(1), logged(2), logged(3, true)],
    ])
    expect(printed.map((p) => p.attempt)).toEqual([1, 2, 3])
  })

  it('a look that sees fewer (a stale answer) repeats nothing and loses nothing', () => {
    const printed = follow([[logged(1), logged(2)], [logged(1)], [logged(1), logged(2), logged(3)]])
    expect(printed.map((p) => p.attempt)).toEqual([1, 2, 3])
  })

  it("an older emulator's entry, without status: derived from the answer and the attempt's number", () => {
    const { status: _s, nextAttemptAt: _n, outcome: _o, ...old } = logged(8)
    expect(loggedAttemptSeen(old, AT)).toMatchObject({ attempt: 8, status: 'failed' })
    expect(loggedAttemptSeen({ ...old, attempt: 2 }, AT)).toMatchObject({ status: 'retrying' })
    expect(loggedAttemptSeen({ ...old, ok: true }, AT)).toMatchObject({
      status: 'succeeded',
      outcome: null,
      nextAttemptAt: null,
    })
  })
})

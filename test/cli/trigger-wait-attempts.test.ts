/**
 * trigger --wait prints every attempt of a delivery once, in order, with its own
 * number and answer (issue 51): against a receiver that fails and then succeeds,
 * with attempts still out when trigger looks, and while the emulator's clock is
 * moved once every half second (as trigger's help suggests, faster).
 */
import type { ServerResponse } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { killLive, type Live, live, startLoop } from '../support/cli-live.js'
import { type Receiver, startReceiver } from '../support/emulator-harness.js'

const receivers: Receiver[] = []
const stops: (() => Promise<void>)[] = []
afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()))
  killLive()
  await Promise.all(receivers.splice(0).map((r) => r.close()))
})

/** A receiver that answers 500 to the first `failures` requests, then 200; each answer after `delayMs`. */
async function flaky(failures: number, delayMs = 0) {
  let n = 0
  const receiver = await startReceiver((req, res: ServerResponse) => {
    const failing = n++ < failures
    req.resume()
    setTimeout(() => {
      if (failing) res.writeHead(500).end('{"error":{"code":"boom"}}')
      else res.writeHead(200).end('{"outcome":"processed"}')
    }, delayMs)
  })
  receivers.push(receiver)
  return receiver
}

/** `POST /emulator/clock {advanceMs: 5 min}` every `everyMs` until stopped, as a second client would. */
function moveClock(env: Record<string, string>, everyMs: number) {
  let going = true
  const moving = (async () => {
    while (going) {
      await fetch(`${env.AFFILIATE_API_URL}/emulator/clock`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${env.AFFILIATE_API_KEY}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ advanceMs: 5 * 60_000 }),
      })
      await new Promise((resolve) => setTimeout(resolve, everyMs))
    }
  })()
  stops.push(async () => {
    going = false
    await moving
  })
}

/** An endpoint for `url`, made with the CLI. */
async function createEndpoint(
  cli: Awaited<ReturnType<typeof startLoop>>['cli'],
  url: string,
): Promise<void> {
  const made = await cli('endpoints', 'create', '--url', url, '--show-secret')
  expect(made.code, made.stderr).toBe(0)
}

/** The exit code, once it exits (it may have already). */
const exited = (waiting: Live) =>
  waiting.child.exitCode ?? new Promise((resolve) => waiting.child.once('exit', resolve))

/** The attempt lines: [number, answer, status] each. */
const attemptLines = (stdout: string) =>
  [...stdout.matchAll(/ {2}attempt (\S+) {2}(\d+)(?: \S+)? \((\w+)\)/g)].map((m) => [
    m[1],
    Number(m[2]),
    m[3],
  ])

const EXPECTED = [
  ['1', 500, 'retrying'],
  ['2', 500, 'retrying'],
  ['3', 200, 'succeeded'],
]

describe('trigger --wait prints each attempt once, in order', () => {
  it('a receiver that fails twice, slowly, then succeeds: attempts 1, 2, 3, each once with its own answer', async () => {
    // 600x: the first retry 100 ms after the first attempt, the second 500 ms after that.
    const { env, cli } = await startLoop()
    // Each answer takes 1.2 s: trigger, looking once a second, finds attempts still out.
    const receiver = await flaky(2, 1_200)
    await createEndpoint(cli, receiver.url)
    const waiting = live(['trigger', 'conversion.created', '--wait', '--timeout', '60s'], env)
    expect(await exited(waiting)).toBe(0)
    expect(attemptLines(waiting.stdout())).toEqual(EXPECTED)
    expect(waiting.stdout()).toMatch(
      /attempt 1 {2}500 boom \(retrying\) {2}1\d{3} ms {2}next attempt 2 in 1 min of service time/,
    )
    expect(waiting.stdout()).toMatch(/attempt 3 {2}200 processed \(succeeded\) {2}1\d{3} ms$/m)
  }, 90_000)

  it('while the clock moves 5 min every half second: attempt 1 is printed, and no number twice', async () => {
    // Real time: only the clock's moves make the attempts, two of them in one move.
    const { env, cli } = await startLoop(['--time-scale', '1'])
    const receiver = await flaky(2)
    await createEndpoint(cli, receiver.url)
    const waiting = live(['trigger', 'conversion.created', '--wait', '--timeout', '60s'], env)
    await waiting.waitFor(/^conversion\.created evt_/m)
    moveClock(env, 500)
    expect(await exited(waiting)).toBe(0)
    expect(attemptLines(waiting.stdout())).toEqual(EXPECTED)
  }, 90_000)

  it('--json while the clock moves: one record per attempt, numbered 1, 2, 3', async () => {
    const { env, cli } = await startLoop(['--time-scale', '1'])
    const receiver = await flaky(2)
    await createEndpoint(cli, receiver.url)
    const args = ['trigger', 'conversion.created', '--wait', '--json', '--timeout', '60s']
    const waiting = live(args, env)
    await waiting.waitFor(/"conversionId"/)
    moveClock(env, 500)
    expect(await exited(waiting)).toBe(0)
    const records = waiting
      .stdout()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((record) => record.type === 'attempt')
    expect(records.map((r) => [String(r.attempt), r.responseStatus, r.status])).toEqual(EXPECTED)
    expect(records.map((r) => r.durationMs)).toEqual([
      expect.any(Number),
      expect.any(Number),
      expect.any(Number),
    ])
    expect(records[0]?.nextAttemptAt).toMatch(/^\d{4}-\d\d-\d\dT/)
    expect(records[2]).toMatchObject({ outcome: 'processed', nextAttemptAt: null })
  }, 90_000)
})

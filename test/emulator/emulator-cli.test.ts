/**
 * `affiliate-webhooks emulator` as users run it: the built binary in a real
 * process, its banner, its API, one line per attempt, Ctrl-C, and bad flags.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { CLI, killLive, type Live, live } from '../support/cli-live.js'
import { answer, conversion, startReceiver } from '../support/emulator-harness.js'
import { run } from '../support/run-process.js'

const KEY = `la_${'k'.repeat(32)}`

let work: string
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'aw-emulator-cli-'))
})
afterAll(() => rmSync(work, { recursive: true, force: true }))

/** The emulator, once its banner names its URL. */
interface Started extends Live {
  url: string
}

afterEach(killLive)

async function startCli(args: string[]): Promise<Started> {
  const emulator = live(['emulator', '--port', '0', ...args])
  await emulator.waitFor(/Ctrl-C/)
  const match = await emulator.waitFor(/URL\s+(http:\/\/\S+)\/v1\n/)
  return Object.assign(emulator, { url: match[1] as string })
}

const stop = (started: Started) => started.stop()

/** Runs the emulator with bad flags: it must exit on its own. */
const runCli = (args: string[]) => run(process.execPath, [CLI, 'emulator', ...args])

describe('affiliate-webhooks emulator', () => {
  it('prints a banner with URL, generated key, time scale and the loopback rule, serves /v1/health, and stops on SIGINT with exit 0', async () => {
    const started = await startCli([])
    const banner = started.stdout()
    const key = /API key\s+(la_[A-Za-z0-9]{32})/.exec(banner)?.[1]
    expect(key).toBeDefined()
    expect(banner).toMatch(/generated/)
    expect(banner).toMatch(/Time scale\s+1/)
    expect(banner).toMatch(/loopback/)
    const health = await fetch(`${started.url}/v1/health`)
    expect(health.status).toBe(200)
    expect((await health.json()).success).toBe(true)
    const me = await fetch(`${started.url}/v1/me`, { headers: { authorization: `Bearer ${key}` } })
    expect(me.status).toBe(200)
    expect(banner).not.toMatch(/More keys/)
    expect(await stop(started)).toBe(0)
  })

  it('prints one line per attempt (time, endpoint, event, attempt n/8, result, ms) and never the secret', async () => {
    const receiver = await startReceiver(answer(500))
    try {
      const started = await startCli(['--api-key', KEY, '--time-scale', '60', '--strict'])
      expect(started.stdout()).toMatch(/strict/)
      expect(started.stdout()).toContain(KEY)
      const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }
      // --strict: a local http URL is refused as the service would.
      const refused = await fetch(`${started.url}/v1/webhooks`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ url: receiver.url, events: ['conversion.created'] }),
      })
      expect(refused.status).toBe(400)
      await stop(started)

      const relaxed = await startCli(['--api-key', KEY])
      const created = await fetch(`${relaxed.url}/v1/webhooks`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ url: receiver.url, events: ['conversion.created'] }),
      })
      const endpoint = (await created.json()).data
      await fetch(`${relaxed.url}/emulator/conversions`, {
        method: 'POST',
        headers,
        body: JSON.stringify(conversion(1)),
      })
      await fetch(`${relaxed.url}/emulator/clock`, {
        method: 'POST',
        headers,
        // Minute batches: attempt 1 goes with the next one; attempt 2, due a minute
        // after it was sent, with the batch after that.
        body: JSON.stringify({ advanceMs: 180_000 }),
      })
      const attemptLines = () =>
        relaxed
          .stdout()
          .split('\n')
          .filter((line) => line.includes('attempt '))
      // The lines were written before the clock answered; the pipe may still carry them.
      await expect.poll(() => attemptLines().length).toBe(2)
      const lines = attemptLines()
      expect(lines[0]).toMatch(
        new RegExp(
          `^\\d\\d:\\d\\d:\\d\\d  ${endpoint.id}  evt_[0-9a-f]+  conversion\\.created  attempt 1/8  500 failed  \\d+ ms$`,
        ),
      )
      expect(lines[1]).toMatch(/attempt 2\/8 {2}500 failed/)
      expect(relaxed.stdout()).not.toContain(endpoint.secret)
      expect(relaxed.stdout()).not.toContain('whsec_')
      expect(await stop(relaxed)).toBe(0)
    } finally {
      await receiver.close()
    }
  })

  it('with only a limited key, a key with every scope is generated and both are listed', async () => {
    const started = await startCli(['--api-key', `${KEY}:webhooks:read`])
    const banner = started.stdout()
    const key = /API key\s+(la_[A-Za-z0-9]{32}) {2}\(generated/.exec(banner)?.[1]
    expect(key).toBeDefined()
    expect(key).not.toBe(KEY)
    expect(banner).toMatch(/More keys\s+\.\.\.kkkk \(webhooks:read\)/)
    const limited = await fetch(`${started.url}/v1/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}` },
    })
    expect(limited.status).toBe(403)
    expect(await stop(started)).toBe(0)
  })

  it('--state keeps endpoints across a restart', async () => {
    const state = join(work, 'state.json')
    const first = await startCli(['--api-key', KEY, '--state', state])
    const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }
    const created = await fetch(`${first.url}/v1/webhooks`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ url: 'http://127.0.0.1:9/hooks', events: ['conversion.created'] }),
    })
    const { id } = (await created.json()).data
    expect(await stop(first)).toBe(0)
    const second = await startCli(['--api-key', KEY, '--state', state])
    expect(second.stdout()).toContain(state)
    const got = await fetch(`${second.url}/v1/webhooks/${id}`, { headers })
    expect(got.status).toBe(200)
    expect(await stop(second)).toBe(0)
  })

  it.each([
    [['--port', 'abc'], /--port must be a whole number/],
    [['--port', '70000'], /--port must be a whole number/],
    [['--time-scale', '0'], /--time-scale must be a number > 0/],
    [['--time-scale', 'fast'], /--time-scale must be a number/],
    [['--api-key', 'la_short'], /--api-key: API key must be la_ followed by 32/],
    [['--api-key', `${KEY}:webhooks:admin`], /unknown scope "webhooks:admin"/],
    [['--nope'], /unknown option --nope/],
    [['--host', ''], /--host must not be empty/],
  ])('%j: one line saying what is wrong, exit 2', async (args, message) => {
    const result = await runCli(args)
    expect(result.code).toBe(2)
    const [first] = result.stderr.split('\n')
    expect(first).toMatch(message)
    expect(result.stderr).not.toMatch(/\n\s+at /)
    expect(result.stdout).toBe('')
  })

  it('exits 1 with one line (and a hint for the usual cause) when the port is taken or the state file is not one', async () => {
    const started = await startCli(['--api-key', KEY])
    const port = new URL(started.url).port
    const taken = await runCli(['--port', port])
    expect(taken.code).toBe(1)
    expect(taken.stderr).toMatch(
      /^affiliate-webhooks emulator: cannot listen on 127\.0\.0\.1:\d+: EADDRINUSE\nhint: another process already listens on that port: stop it, or pick another with --port \(0 picks a free one\)\n$/,
    )
    await stop(started)
    const broken = join(work, 'broken.json')
    writeFileSync(broken, '{ nope')
    const bad = await runCli(['--port', '0', '--state', broken])
    expect(bad.code).toBe(1)
    expect(bad.stderr).toMatch(/^affiliate-webhooks emulator: state file .* is not JSON/)
    expect(bad.stderr.trim().split('\n')).toHaveLength(1)
  })
})

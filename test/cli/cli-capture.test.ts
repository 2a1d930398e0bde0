/**
 * Capture and replay a real delivery: `listen --save` relays to the app and
 * writes each delivery byte-exact, `verify --from` diagnoses the file, `send
 * --from` re-sends it; `send --created-at` reproduces out-of-order arrivals.
 * The built binary as real processes, the node adapter as the app.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { memoryStore } from '@affiliate-webhooks/core'
import { buildConversionEvent, signPayload } from '@affiliate-webhooks/core/testing'
import { bodyOf, captureOf, readCapture, writeCapture } from '@affiliate-webhooks/emulator/internal'
import { affiliateWebhook } from '@affiliate-webhooks/node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run } from '../support/run-process.js'

const root = new URL('../..', import.meta.url).pathname
const BIN = join(root, 'packages/cli/bin/affiliate-webhooks.js')
const SECRET = 'whsec_capture_round_trip'
const cli = (args: string[], env: Record<string, string> = {}) => run(BIN, args, { env })

let dir: string
let app: Server
let appUrl: string
const handled: string[] = []

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'aw-capture-'))
  app = createServer(
    affiliateWebhook({
      secret: SECRET,
      store: memoryStore(),
      logger: false,
      onConversion(conversion, event) {
        handled.push(`${event.id} ${conversion.status}`)
      },
    }),
  )
  app.listen(0, '127.0.0.1')
  await once(app, 'listening')
  appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}/hooks`
})

afterAll(() => {
  app.closeAllConnections()
  app.close()
  rmSync(dir, { recursive: true, force: true })
})

/** A running `listen`, its URL and what it printed so far. */
async function startListen(args: string[]) {
  const child: ChildProcess = spawn(BIN, ['listen', '--port', '0', ...args], { cwd: root })
  let stdout = ''
  let stderr = ''
  child.stdout?.setEncoding('utf8').on('data', (t: string) => {
    stdout += t
  })
  child.stderr?.setEncoding('utf8').on('data', (t: string) => {
    stderr += t
  })
  while (!/listening on (\S+),/.test(stderr))
    await once(child.stderr as NodeJS.ReadableStream, 'data')
  const url = /listening on (\S+),/.exec(stderr)?.[1] as string
  return {
    url: `${url.replace(/,$/, '')}/hooks`,
    out: () => stdout,
    err: () => stderr,
    async lineFor(text: string) {
      while (!stdout.includes(text)) await once(child.stdout as NodeJS.ReadableStream, 'data')
      return stdout.split('\n').find((line) => line.includes(text)) as string
    },
    async stop() {
      child.kill('SIGINT')
      const [code] = (await once(child, 'close')) as [number | null]
      return code
    },
  }
}

/** Signs these exact bytes and posts them, as the service would. */
async function deliver(url: string, body: Uint8Array, eventId: string) {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'service-event-id': eventId,
      'service-delivery-attempt': '2',
      'service-signature': await signPayload({ secret: SECRET, payload: body }),
    },
    body: new Uint8Array(body),
  })
  return { status: response.status, text: await response.text() }
}

describe('listen --save, verify --from, send --from', () => {
  it('round-trips a real delivery byte for byte', async () => {
    const saveDir = join(dir, 'round-trip')
    const relay = await startListen(['--forward-to', appUrl, '--save', saveDir])
    const event = buildConversionEvent({
      type: 'conversion.updated',
      conversion: { id: 9001, status: 'approved' },
    })
    // Odd spacing, non-ASCII and a trailing newline: anything re-encoded would show.
    const text = `${JSON.stringify(event, null, 3).replace('"approved"', '"approved" ')}\n`.replace(
      '"EUR"',
      '"EUR", "note": "Müller · 東京 ✓"',
    )
    const bytes = new TextEncoder().encode(text)
    const answer = await deliver(relay.url, bytes, event.id)
    expect(answer).toEqual({ status: 200, text: '{"received":true,"outcome":"processed"}' })
    const line = await relay.lineFor(event.id)
    expect(line).toMatch(
      new RegExp(
        `^\\d{2}:\\d{2}:\\d{2}  ${event.id}  conversion.updated  attempt 2  -> 200  \\d+ ms  saved `,
      ),
    )
    expect(await relay.stop()).toBe(0)

    const files = readdirSync(saveDir)
    expect(files).toHaveLength(1)
    const file = join(saveDir, files[0] as string)
    const capture = await readCapture(file)
    expect(Buffer.from(bodyOf(capture)).equals(Buffer.from(bytes))).toBe(true)
    expect(capture.headers['service-event-id']).toBe(event.id)
    expect(JSON.stringify(capture)).not.toContain(SECRET)

    const verified = await cli(['verify', '--from', file, '--secret', SECRET])
    expect(verified.code).toBe(0)
    expect(verified.stdout).toMatch(new RegExp(`^verified: conversion.updated ${event.id}`))
    const wrong = await cli(['verify', '--from', file, '--secret', 'whsec_some_other_endpoint'])
    expect(wrong.code).toBe(1)
    expect(wrong.stdout).toMatch(/^does not verify: wrong_secret/)

    const resent = await cli(['send', '--from', file, appUrl])
    expect(resent.code).toBe(0)
    expect(resent.stdout).toMatch(/200 acknowledged/)
    expect(resent.stdout).toContain('{"received":true,"outcome":"duplicate"}')
    expect(handled.filter((h) => h.startsWith(event.id))).toEqual([`${event.id} approved`])
  }, 30_000)

  it('app down: the sender gets 502, never a 2xx; oversize: 413, not forwarded', async () => {
    const dead = createServer().listen(0, '127.0.0.1')
    await once(dead, 'listening')
    const deadUrl = `http://127.0.0.1:${(dead.address() as AddressInfo).port}/hooks`
    dead.close()
    const relay = await startListen(['--forward-to', deadUrl])
    const event = buildConversionEvent()
    const answer = await deliver(
      relay.url,
      new TextEncoder().encode(JSON.stringify(event)),
      event.id,
    )
    expect(answer.status).toBe(502)
    expect(JSON.parse(answer.text)).toMatchObject({ error: { code: 'forward_failed' } })
    expect(await relay.lineFor(event.id)).toMatch(/-> 502 .*ECONNREFUSED/)
    const big = await fetch(relay.url, { method: 'POST', body: new Uint8Array(1_100_000) })
    expect(big.status).toBe(413)
    expect(await relay.stop()).toBe(0)
  }, 30_000)

  it('send --from an old capture: refused as too old, accepted with --resign', async () => {
    const event = buildConversionEvent()
    const body = new TextEncoder().encode(JSON.stringify(event))
    const tenMinutesAgo = Math.floor(Date.now() / 1000) - 600
    const file = await writeCapture(
      join(dir, 'old'),
      captureOf({
        method: 'POST',
        path: '/hooks',
        headers: {
          'content-type': 'application/json',
          'service-event-id': event.id,
          'service-delivery-attempt': '1',
          'service-signature': await signPayload({
            secret: SECRET,
            payload: body,
            timestamp: tenMinutesAgo,
          }),
        },
        body,
      }),
    )
    const refused = await cli(['send', '--from', file, appUrl])
    expect(refused.code).toBe(1)
    expect(refused.stdout).toContain('timestamp_outside_tolerance')
    const resigned = await cli(['send', '--from', file, appUrl, '--resign'], {
      AFFILIATE_WEBHOOK_SECRET: SECRET,
    })
    expect(resigned.code).toBe(0)
    expect(resigned.stdout).toContain('"outcome":"processed"')
  })

  it.each([
    [['listen'], /--forward-to is required/],
    [['listen', '--forward-to', 'not a url'], /--forward-to not a url is not an absolute URL/],
    [
      ['listen', '--forward-to', 'http://127.0.0.1:1/hooks', '--port', 'x'],
      /--port must be a whole number/,
    ],
    [
      ['verify', '--from', '/nonexistent/capture.json', '--secret', SECRET],
      /cannot read \/nonexistent\/capture.json: no such file/,
    ],
    [['send', '--from', '/nonexistent/capture.json', 'http://127.0.0.1:1/'], /no such file/],
    [['send', '--from', 'package.json', 'http://127.0.0.1:1/'], /is not a capture of version 1/],
    [
      ['verify', '--from', 'package.json', '--header', 't=1,v1=00'],
      /--from brings its own; leave out --header/,
    ],
    [
      ['send', '--url', 'http://127.0.0.1:1/', '--created-at', 'yesterday', '--secret', SECRET],
      /--created-at must be an ISO 8601 time/,
    ],
    // A bad --created-at is named first, whatever else is wrong.
    [
      [
        'send',
        '--url',
        'http://127.0.0.1:1/',
        '--created-at',
        'yesterday',
        '--type',
        'bogus',
        '--secret',
        SECRET,
      ],
      /--created-at must be an ISO 8601 time/,
    ],
  ])('bad input %j: one line, exit 2', async (args, message) => {
    const result = await cli(args)
    expect(result.code).toBe(2)
    expect(result.stderr.split('\n')[0]).toMatch(message)
    expect(result.stderr).not.toMatch(/\n\s+at /)
  })

  it('an unreadable capture file: not JSON', async () => {
    const file = join(dir, 'broken.json')
    writeFileSync(file, '{"version":1,')
    const result = await cli(['verify', '--from', file, '--secret', SECRET])
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/is not JSON: not a file written by listen --save/)
  })
})

describe('send --created-at', () => {
  it('reproduces an older update arriving after a newer one: the receiver answers stale', async () => {
    const env = { AFFILIATE_WEBHOOK_SECRET: SECRET }
    const newer = await cli(
      [
        'send',
        '--url',
        appUrl,
        '--conversion-id',
        '777001',
        '--status',
        'available',
        '--created-at',
        '2026-11-20T10:00:00Z',
      ],
      env,
    )
    expect(newer.stdout).toContain('"outcome":"processed"')
    const older = await cli(
      [
        'send',
        '--url',
        appUrl,
        '--conversion-id',
        '777001',
        '--status',
        'approved',
        '--created-at',
        '2026-11-20T09:00:00Z',
      ],
      env,
    )
    expect(older.code).toBe(0)
    expect(older.stdout).toContain('"outcome":"stale"')
    expect(
      handled
        .filter((h) => h.endsWith(' approved') || h.endsWith(' available'))
        .some((h) => h.endsWith('available')),
    ).toBe(true)
  })
})

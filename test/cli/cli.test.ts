/**
 * The `affiliate-webhooks` binary as users run it: the built file (shebang,
 * executable bit, npm's bin link), real processes, real stdin, real exit codes,
 * against a real receiver. `npm test` builds first.
 */
import { once } from 'node:events'
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Conversion } from '@affiliate-webhooks/core'
import { memoryStore } from '@affiliate-webhooks/core'
import { buildConversionEvent, signPayload } from '@affiliate-webhooks/core/testing'
import { affiliateWebhook } from '@affiliate-webhooks/node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../support/redis-servers.js'
import { run } from '../support/run-process.js'

const root = new URL('../..', import.meta.url).pathname
const BIN = join(root, 'packages/cli/dist/cli.js')
const NPM_BIN = join(root, 'node_modules/.bin/affiliate-webhooks')
const SECRET = 'whsec_cli_test'
const COMMANDS = [
  'init',
  'sign',
  'send',
  'verify',
  'simulate',
  'listen',
  'emulator',
  'endpoints',
  'test',
  'deliveries',
  'replay',
  'recover',
  'doctor',
  'rotate',
  'queue',
  'programs',
  'apply',
  'applications',
  'sql',
]

const cli = (args: string[], options: Parameters<typeof run>[2] = {}) =>
  run(process.execPath, [BIN, ...args], options)

let work: string
const file = (name: string, content: string | Uint8Array) => {
  const path = join(work, name)
  writeFileSync(path, content)
  return path
}

// A receiver: the node adapter with the memory store, recording its conversions table.
const table = new Map<number, Conversion>()
const failOnce = new Set<string>()
let receiverUrl: string
let closeReceiver: () => Promise<void>

beforeAll(async () => {
  try {
    accessSync(BIN, constants.X_OK)
  } catch {
    throw new Error(`${BIN} is missing or not executable: run npm run build (npm test does)`)
  }
  work = mkdtempSync(join(tmpdir(), 'aw-cli-'))
  const server = createServer(
    affiliateWebhook({
      path: '/hooks',
      secret: SECRET,
      store: memoryStore(),
      onConversion(conversion, event) {
        // The first delivery of an event whose conversion id ends in 7 fails, as flaky handlers do.
        if (conversion.id % 10 === 7 && !failOnce.has(event.id)) {
          failOnce.add(event.id)
          throw new Error('flaky')
        }
        table.set(conversion.id, conversion)
      },
    }),
  )
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`
  closeReceiver = async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

afterAll(async () => {
  await closeReceiver?.()
  if (work) rmSync(work, { recursive: true, force: true })
})

describe('affiliate-webhooks', () => {
  it('--help lists every command and exits 0', async () => {
    const result = await cli(['--help'])
    expect(result.code).toBe(0)
    for (const command of COMMANDS) expect(result.stdout).toMatch(new RegExp(`^  ${command} `, 'm'))
    expect(result.stdout).toMatch(/AFFILIATE_WEBHOOK_SECRET/)
  })

  it('runs as the file npm links, by its shebang, with no node in front', async () => {
    for (const path of [BIN, NPM_BIN]) {
      const result = await run(path, ['--help'])
      expect(result.code, path).toBe(0)
      expect(result.stdout).toMatch(/^Usage: affiliate-webhooks <command>/)
    }
  })

  it.each(COMMANDS)('%s --help shows its usage and exits 0', async (command) => {
    const result = await cli([command, '--help'])
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(new RegExp(`^Usage: affiliate-webhooks ${command} `))
    expect(result.stdout).toMatch(/Exit codes:/)
    expect((await cli(['help', command])).stdout).toBe(result.stdout)
  })

  it('without a command, or with an unknown one, prints usage and exits 2', async () => {
    const bare = await cli([])
    expect(bare.code).toBe(2)
    expect(bare.stdout).toMatch(/^Usage:/)
    const unknown = await cli(['frobnicate'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toMatch(
      new RegExp(`unknown command "frobnicate"; commands: ${COMMANDS.join(', ')}`),
    )
  })

  it('--version prints the version of the package manifest', async () => {
    const result = await cli(['--version'])
    expect(result.code).toBe(0)
    const manifest = new URL('../../packages/cli/package.json', import.meta.url)
    expect(result.stdout).toBe(`${JSON.parse(readFileSync(manifest, 'utf8')).version}\n`)
  })

  it('rejects an unknown option with exit code 2 and the command to get help', async () => {
    const result = await cli(['sign', '--secret', SECRET, '--sekret', 'x'])
    expect(result.code).toBe(2)
    expect(result.stderr).toBe(
      'affiliate-webhooks sign: unknown option --sekret\nRun "affiliate-webhooks sign --help" for usage.\n',
    )
  })
})

describe('sign', () => {
  const body =
    '{"id":"evt_sign","type":"webhook.test","createdAt":"2026-11-20T10:00:00.000Z","data":{}}'

  it('prints the same Service-Signature as the core for a body file', async () => {
    const result = await cli([
      'sign',
      '--secret',
      SECRET,
      '--body',
      file('sign.json', body),
      '--timestamp',
      '1763719200',
    ])
    expect(result.code).toBe(0)
    expect(result.stdout).toBe(
      `${await signPayload({ secret: SECRET, payload: body, timestamp: 1763719200 })}\n`,
    )
  })

  it('reads the body from stdin and the secret from AFFILIATE_WEBHOOK_SECRET', async () => {
    const result = await cli(['sign', '--timestamp', '1763719200', '--json'], {
      input: body,
      env: { AFFILIATE_WEBHOOK_SECRET: SECRET },
    })
    expect(result.code).toBe(0)
    const expected = await signPayload({ secret: SECRET, payload: body, timestamp: 1763719200 })
    expect(JSON.parse(result.stdout)).toEqual({
      header: expected,
      timestamp: 1763719200,
      signature: expected.split('v1=')[1],
    })
  })

  it('signs the exact bytes, trailing newline included, and says so', async () => {
    const result = await cli(['sign', '--secret', SECRET, '--timestamp', '1'], {
      input: `${body}\n`,
    })
    expect(result.stdout.trim()).toBe(
      await signPayload({ secret: SECRET, payload: `${body}\n`, timestamp: 1 }),
    )
    expect(result.stderr).toMatch(/ends with a newline/)
  })

  it('exits 2 without a secret, or with a body file that does not exist', async () => {
    const noSecret = await cli(['sign'], { input: body })
    expect(noSecret.code).toBe(2)
    expect(noSecret.stderr).toMatch(
      /no secret: pass --secret whsec_\.\.\. or set AFFILIATE_WEBHOOK_SECRET/,
    )
    const missing = await cli(['sign', '--secret', SECRET, '--body', join(work, 'nope.json')])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toMatch(/cannot read --body .*nope\.json: no such file/)
  })
})

describe('send', () => {
  it('delivers a signed conversion event and prints the status and answer', async () => {
    const result = await cli([
      'send',
      '--url',
      receiverUrl,
      '--secret',
      SECRET,
      '--status',
      'approved',
      '--conversion-id',
      '4242',
    ])
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(
      /^POST http:\/\/127\.0\.0\.1:\d+\/hooks {2}conversion\.updated evt_\w+ \(conversion 4242\), attempt 1\n200 acknowledged in \d+ ms\n\{"received":true,"outcome":"processed"\}\n$/,
    )
    expect(table.get(4242)?.status).toBe('approved')
  })

  it('sends webhook.test and a body file as is, with --json', async () => {
    const test = await cli([
      'send',
      '--url',
      receiverUrl,
      '--secret',
      SECRET,
      '--type',
      'webhook.test',
      '--json',
    ])
    expect(test.code).toBe(0)
    expect(JSON.parse(test.stdout)).toMatchObject({
      eventType: 'webhook.test',
      responseStatus: 200,
      ok: true,
    })

    const event = buildConversionEvent({ conversion: { id: 5151, status: 'available' } })
    const body = file('send.json', JSON.stringify(event))
    const sent = JSON.parse(
      (
        await cli([
          'send',
          '--url',
          receiverUrl,
          '--secret',
          SECRET,
          '--body',
          body,
          '--attempt',
          '3',
          '--json',
        ])
      ).stdout,
    )
    expect(sent).toMatchObject({ eventId: event.id, attempt: 3, responseStatus: 200 })
    expect(sent.request.headers).toMatchObject({
      'Content-Type': 'application/json',
      'Service-Event-Id': event.id,
      'Service-Delivery-Attempt': '3',
    })
    expect(table.get(5151)?.status).toBe('available')
  })

  it('sends a body file byte for byte, signed over those bytes', async () => {
    const bytes = new Uint8Array([
      0xef,
      0xbb,
      0xbf,
      ...new TextEncoder().encode('{"id":"evt_bom","x":"\u00e9"}\n'),
    ])
    let received: Buffer | undefined
    let signature = ''
    const server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (chunk: Buffer) => chunks.push(chunk))
      req.on('end', () => {
        received = Buffer.concat(chunks)
        signature = String(req.headers['service-signature'])
        res.writeHead(204).end()
      })
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    const { port } = server.address() as AddressInfo
    const result = await cli([
      'send',
      '--url',
      `http://127.0.0.1:${port}/`,
      '--secret',
      SECRET,
      '--body',
      file('bom.json', bytes),
    ])
    server.close()
    expect(result.code).toBe(0)
    expect(new Uint8Array(received ?? [])).toEqual(bytes)
    const t = Number(/t=(\d+)/.exec(signature)?.[1])
    expect(signature).toBe(await signPayload({ secret: SECRET, payload: bytes, timestamp: t }))
  })

  it('exits 1 on an answer that is not 2xx, and shows it', async () => {
    const result = await cli(['send', '--url', receiverUrl, '--secret', 'whsec_not_this_one'])
    expect(result.code).toBe(1)
    expect(result.stdout).toMatch(/401 not acknowledged: the service would retry/)
    expect(result.stdout).toMatch(/"code":"signature_mismatch"/)
  })

  it('exits 1 when nothing answers', async () => {
    const result = await cli([
      'send',
      '--url',
      `http://127.0.0.1:${await freePort()}/hooks`,
      '--secret',
      SECRET,
    ])
    expect(result.code).toBe(1)
    expect(result.stdout).toMatch(/no answer: .*ECONNREFUSED.*; the service would retry/)
  })

  it('exits 2 without --url, with a bad one, or with --body and --status together', async () => {
    for (const args of [
      ['send', '--secret', SECRET],
      ['send', '--secret', SECRET, '--url', 'localhost:3000'],
      [
        'send',
        '--secret',
        SECRET,
        '--url',
        receiverUrl,
        '--body',
        'x.json',
        '--status',
        'approved',
      ],
      ['send', '--secret', SECRET, '--url', receiverUrl, '--attempt', '9'],
    ]) {
      const result = await cli(args)
      expect(result.code, args.join(' ')).toBe(2)
      expect(result.stderr).toMatch(/^affiliate-webhooks send: /)
    }
  })
})

describe('verify', () => {
  // Created two hours ago: a capture signed an hour ago must not carry an event from its future.
  const body = JSON.stringify(
    buildConversionEvent({
      id: 'evt_verify',
      createdAt: Date.now() - 2 * 3_600_000,
      conversion: { id: 9, status: 'approved' },
    }),
  )
  const now = () => Math.floor(Date.now() / 1000)

  it('says it verifies and exits 0', async () => {
    const header = await signPayload({ secret: SECRET, payload: body })
    const result = await cli([
      'verify',
      '--secret',
      SECRET,
      '--header',
      header,
      '--body',
      file('v.json', body),
    ])
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/^verified: conversion\.created evt_verify\n/)
  })

  it('names the likely reason when it does not verify, and exits 1', async () => {
    const header = await signPayload({ secret: SECRET, payload: body })
    const cases: [string, string[], string, string][] = [
      ['wrong secret', ['--secret', 'whsec_other'], body, 'wrong_secret'],
      ['no prefix', ['--secret', 'cli_test'], body, 'secret_without_prefix'],
      ['trailing newline', ['--secret', SECRET], `${body}\n`, 'body_trailing_newline'],
      [
        're-serialised',
        ['--secret', SECRET],
        JSON.stringify(JSON.parse(body), null, 2),
        'body_reserialized',
      ],
      ['CRLF at the end', ['--secret', SECRET], `${body}\r\n`, 'body_trailing_newline'],
    ]
    for (const [name, flags, captured, code] of cases) {
      const result = await cli(['verify', '--header', header, ...flags], { input: captured })
      expect(result.code, name).toBe(1)
      expect(result.stdout, name).toMatch(new RegExp(`^does not verify: ${code}\n`))
    }
  })

  it('says by how much the timestamp is outside the tolerance', async () => {
    const header = await signPayload({ secret: SECRET, payload: body, timestamp: now() - 3600 })
    const result = await cli(['verify', '--secret', SECRET, '--header', header, '--json'], {
      input: body,
    })
    expect(result.code).toBe(1)
    const diagnosis = JSON.parse(result.stdout)
    expect(diagnosis).toMatchObject({
      verified: false,
      code: 'timestamp_outside_tolerance',
      tolerance: 300,
    })
    expect(diagnosis.ageSeconds).toBeGreaterThanOrEqual(3600)
    expect(diagnosis.message).toMatch(/s ago, \d+ s beyond the 300 s tolerance/)
    // As of when it was captured, it verifies.
    const then = await cli(
      ['verify', '--secret', SECRET, '--header', header, '--now', String(now() - 3590)],
      { input: body },
    )
    expect(then.code).toBe(0)
  })

  it('reports a malformed header, and exits 2 without --header', async () => {
    const malformed = await cli(['verify', '--secret', SECRET, '--header', 'v1=abc'], {
      input: body,
    })
    expect(malformed.code).toBe(1)
    expect(malformed.stdout).toMatch(/^does not verify: malformed_header/)
    const missing = await cli(['verify', '--secret', SECRET], { input: body })
    expect(missing.code).toBe(2)
    expect(missing.stderr).toMatch(/--header is required/)
  })
})

describe('simulate', () => {
  it('runs lifecycles to a URL, prints a summary table and exits 0 when every delivery succeeded', async () => {
    table.clear()
    const result = await cli([
      'simulate',
      '--url',
      receiverUrl,
      '--secret',
      SECRET,
      '--conversions',
      '12',
      '--duplicates',
      '0.3',
      '--reorder',
      '0.3',
      '--concurrency',
      '4',
      '--time-scale',
      '36000',
      '--seed',
      '7',
    ])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toMatch(
      /^Simulated 12 conversion lifecycles -> http:\/\/127\.0\.0\.1:\d+\/hooks\n/,
    )
    expect(result.stdout).toMatch(
      /time scale 36000, concurrency 4, duplicates 0\.3, reorder 0\.3, timeout 10000 ms, seed 7/,
    )
    for (const row of [
      'deliveries',
      '  succeeded',
      '  failed  *0',
      'attempts',
      'status codes  *200 x',
      'endpoint  *active',
    ]) {
      expect(result.stdout).toMatch(new RegExp(`^${row}`, 'm'))
    }
    expect(result.stdout).toMatch(/Every delivery succeeded\.\n$/)
    // Progress went to stderr, not into the table.
    expect(result.stderr).toMatch(/^events +\d+\/\d+ {2}succeeded/m)
    expect(table.size).toBe(12)
  })

  it('--json gives the summary as data; the same seed plans the same run', async () => {
    const args = [
      'simulate',
      '--url',
      receiverUrl,
      '--secret',
      SECRET,
      '--conversions',
      '10',
      '--time-scale',
      '36000',
      '--seed',
      '99',
      '--quiet',
      '--json',
    ]
    const [a, b] = await Promise.all([cli(args), cli(args)])
    expect(a.stderr).toBe('')
    const first = JSON.parse(a.stdout)
    const second = JSON.parse(b.stdout)
    expect(first).toMatchObject({
      ok: true,
      settings: { conversions: 10, seed: 99, timeScale: 36000 },
    })
    expect(first.deliveries.total).toBe(first.events)
    expect(first.deliveries.succeeded).toBe(first.events)
    expect(first.statusCodes['200']).toBeGreaterThan(0)
    expect([second.events, second.heldBack, second.replays]).toEqual([
      first.events,
      first.heldBack,
      first.replays,
    ])
  })

  it('exits 1 with the endpoint disabled when the URL never acknowledges', async () => {
    const result = await cli([
      'simulate',
      '--url',
      receiverUrl.replace('/hooks', '/nowhere'),
      '--secret',
      SECRET,
      '--conversions',
      '10',
      '--time-scale',
      '360000',
      '--quiet',
    ])
    expect(result.code).toBe(1)
    expect(result.stdout).toMatch(/^endpoint +DISABLED after 20 failed attempts in a row/m)
    expect(result.stdout).toMatch(/^status codes +404 x \d+/m)
    expect(result.stdout).toMatch(/Failed deliveries:/)
  })

  it('stops on Ctrl-C with the summary so far and exit code 130', async () => {
    // Every attempt fails, so at the service's own pace the next one is a minute away.
    const port = await freePort()
    const server = createServer((_req, res) => res.writeHead(500).end())
    server.listen(port, '127.0.0.1')
    await once(server, 'listening')
    let pid = 0
    const first = new Promise<void>((resolve) => server.once('request', () => resolve()))
    const running = cli(
      [
        'simulate',
        '--url',
        `http://127.0.0.1:${port}/`,
        '--secret',
        SECRET,
        '--conversions',
        '3',
        '--time-scale',
        '60',
        '--quiet',
      ],
      {
        onStart: (p) => {
          pid = p
        },
      },
    )
    await first
    process.kill(pid, 'SIGINT')
    const result = await running
    server.closeAllConnections()
    server.close()
    expect(result.code).toBe(130)
    expect(result.stdout).toMatch(/Stopped before every delivery ended\.\n$/)
  })
})

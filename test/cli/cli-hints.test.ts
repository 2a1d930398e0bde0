/**
 * Each hint the CLI prints after an error, caused for real: a closed port, a
 * taken port, an API key and an endpoint secret swapped, a wrong path on a real
 * Express app, an app too slow to answer, an HTML page from a proxy. The built
 * CLI as a process; exit codes as before the hints.
 */
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { affiliateWebhook, rawBodySaver } from '@affiliate-webhooks/express'
import express from 'express'
import { afterEach, describe, expect, it } from 'vitest'
import { CLI, killLive, startLoop } from '../support/cli-live.js'
import { freePort } from '../support/redis-servers.js'
import { run } from '../support/run-process.js'

const KEY = `la_${'k'.repeat(32)}`
const SECRET = 'whsec_hint_test_secret'
const servers: Server[] = []
afterEach(async () => {
  killLive()
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

const cli = (args: string[], env: Record<string, string | undefined> = {}) =>
  run(process.execPath, [CLI, ...args], {
    env: { AFFILIATE_API_KEY: undefined, AFFILIATE_API_URL: undefined, ...env },
  })

async function serve(server: Server): Promise<string> {
  servers.push(server)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** The most common app shape: express.json() for the whole app, the webhook at /webhooks. */
function expressApp() {
  const app = express()
  app.use(express.json({ verify: rawBodySaver }))
  app.get('/health', (_req, res) => {
    res.json({ ok: true })
  })
  app.post('/webhooks', affiliateWebhook({ secret: SECRET, logger: false, onConversion: () => {} }))
  return createServer(app)
}

describe('hints', () => {
  it('a closed port: the management command asks whether the emulator runs; send whether the app does', async () => {
    const port = await freePort()
    const listed = await cli(['endpoints', 'list'], {
      AFFILIATE_API_URL: `http://127.0.0.1:${port}`,
      AFFILIATE_API_KEY: KEY,
    })
    expect(listed.code).toBe(4)
    expect(listed.stderr).toMatch(/ECONNREFUSED/)
    expect(listed.stderr).toMatch(
      /^hint: nothing listens there: start the emulator \("affiliate-webhooks emulator"\) or set AFFILIATE_API_URL/m,
    )
    const sent = await cli(['send', '--url', `http://127.0.0.1:${port}/hooks`], {
      AFFILIATE_WEBHOOK_SECRET: SECRET,
    })
    expect(sent.code).toBe(1)
    expect(sent.stderr).toBe(
      'hint: nothing listens there: is your app running, on this host and port?\n',
    )
  })

  it('trigger against something that is not the emulator: the service answers 404 route_not_found', async () => {
    const notEmulator = await serve(
      createServer((req, res) => {
        req.resume()
        res.writeHead(404, { 'content-type': 'application/json' })
        res.end(
          JSON.stringify({
            success: false,
            message: 'No route.',
            error: { code: 'route_not_found' },
          }),
        )
      }),
    )
    const result = await cli(['trigger', 'conversion.created'], {
      AFFILIATE_API_URL: notEmulator,
      AFFILIATE_API_KEY: KEY,
    })
    expect(result.code).toBe(3)
    expect(result.stderr).toMatch(
      /^hint: that address is not the emulator: trigger and the \/emulator routes exist only there/m,
    )
  })

  it('a taken port: emulator and listen say to use --port', async () => {
    const taken = createServer()
    const url = await serve(taken)
    const port = new URL(url).port
    for (const args of [
      ['emulator', '--port', port],
      ['listen', '--port', port, '--forward-to', 'http://127.0.0.1:3000/hooks'],
    ]) {
      const result = await cli(args)
      expect(result.code, args[0]).toBe(1)
      expect(result.stderr).toMatch(/EADDRINUSE/)
      expect(result.stderr).toMatch(
        /^hint: another process already listens on that port: stop it, or pick another with --port \(0 picks a free one\)$/m,
      )
    }
  })

  it('an endpoint secret as the API key, and an API key as the secret', async () => {
    const swapped = await cli(['endpoints', 'list'], {
      AFFILIATE_API_URL: 'http://127.0.0.1:4010',
      AFFILIATE_API_KEY: SECRET,
    })
    expect(swapped.code).toBe(2)
    expect(swapped.stderr).toMatch(
      /^affiliate-webhooks endpoints: AFFILIATE_API_KEY holds an endpoint secret \(whsec_\.\.\.\), not an API key\nhint: that is an endpoint secret \(whsec_\.\.\.\), not the account's API key \(la_\.\.\.\)/,
    )
    expect(swapped.stderr).not.toContain(SECRET)

    // The emulator's --api-key: the same hint, and the secret never printed back.
    const emulator = await cli(['emulator', '--api-key', SECRET, '--port', '0'], {})
    expect(emulator.code).toBe(2)
    expect(emulator.stderr).toMatch(
      /^affiliate-webhooks emulator: --api-key: API key must be la_ followed by 32 letters or digits \(this one is an endpoint secret, whsec_\.\.\.\)\nhint: that is an endpoint secret/,
    )
    expect(emulator.stderr).not.toContain(SECRET)

    const url = await serve(expressApp())
    const sent = await cli(['send', '--url', `${url}/webhooks`], { AFFILIATE_WEBHOOK_SECRET: KEY })
    expect(sent.code).toBe(1)
    expect(sent.stdout).toMatch(/401/)
    expect(sent.stderr).toMatch(
      /^hint: that is an API key \(la_\.\.\.\), not the endpoint secret \(whsec_\.\.\.\)/m,
    )
  })

  it('a wrong path on a real Express app: the hint names the path its webhook answers at', async () => {
    const url = await serve(expressApp())
    const sent = await cli(['send', '--url', `${url}/hooks`], { AFFILIATE_WEBHOOK_SECRET: SECRET })
    expect(sent.code).toBe(1)
    expect(sent.stdout).toMatch(/^404 /m)
    expect(sent.stderr).toBe(
      `hint: the app has no route at /hooks; its webhook answers at ${url}/webhooks\n`,
    )
    // The right path works, so the probe did not disturb the app.
    const right = await cli(['send', '--url', `${url}/webhooks`], {
      AFFILIATE_WEBHOOK_SECRET: SECRET,
    })
    expect(right.code, right.stdout).toBe(0)
  })

  it('a wrong path seen by trigger --wait: the same hint after the attempt line', async () => {
    const url = await serve(expressApp())
    const { cli: loop } = await startLoop()
    const made = await loop('endpoints', 'create', '--url', `${url}/hooks`, '--show-secret')
    expect(made.code, made.stderr).toBe(0)
    const triggered = await loop('trigger', 'conversion.created', '--wait', '--timeout', '5s')
    expect(triggered.code).toBe(1)
    // At 600x the retries come fast: the first attempt seen may be a later one.
    expect(triggered.stdout).toMatch(/attempt \d+ {2}404 \(retrying\)/)
    expect(triggered.stderr).toContain(
      `hint: the app has no route at /hooks; its webhook answers at ${url}/webhooks\n`,
    )
  })

  it('a wrong path where no webhook route can be found: the hint says the path is wrong', async () => {
    const app = express()
    app.use(express.json())
    const url = await serve(createServer(app))
    const sent = await cli(['send', '--url', `${url}/hooks`], { AFFILIATE_WEBHOOK_SECRET: SECRET })
    expect(sent.code).toBe(1)
    expect(sent.stderr).toMatch(
      /^hint: the app has no POST route at \/hooks: use the path you mounted/m,
    )
  })

  it('an app too slow to answer', async () => {
    const url = await serve(createServer(() => {}))
    const sent = await cli(['send', '--url', `${url}/hooks`, '--timeout', '300'], {
      AFFILIATE_WEBHOOK_SECRET: SECRET,
    })
    expect(sent.code).toBe(1)
    expect(sent.stderr).toMatch(
      /^hint: your app answered too slowly: the service fails an attempt after 10 s/m,
    )
  })

  it("the app's own HTML error page (a 500, as SvelteKit answers a route that threw): the app's error and its log, not a proxy", async () => {
    const url = await serve(
      createServer((req, res) => {
        req.resume()
        res.writeHead(500, { 'content-type': 'text/html' })
        res.end(
          '<!doctype html><html><head><title>Internal Error</title></head><body>500</body></html>',
        )
      }),
    )
    const sent = await cli(['send', '--url', `${url}/hooks`], { AFFILIATE_WEBHOOK_SECRET: SECRET })
    expect(sent.code).toBe(1)
    const hints = sent.stderr.split('\n').filter((line) => line.startsWith('hint: '))
    expect(hints).toEqual([
      "hint: your app answered its own HTML error page (500): something in the app threw before or in the webhook route (often a missing AFFILIATE_WEBHOOK_SECRET or database URL); the app's server log, where it runs, names the error. A proxy or tunnel in front of the app answers HTML too, usually 502-504",
    ])
  })

  it('an HTML page from a proxy, in front of the app and in front of the API', async () => {
    const url = await serve(
      createServer((req, res) => {
        req.resume()
        res.writeHead(502, { 'content-type': 'text/html' })
        res.end('<html><body><h1>502 Bad Gateway</h1></body></html>')
      }),
    )
    const sent = await cli(['send', '--url', `${url}/hooks`], { AFFILIATE_WEBHOOK_SECRET: SECRET })
    expect(sent.code).toBe(1)
    expect(sent.stderr).toMatch(
      /^hint: an HTML page answered, not the webhook route: a proxy or tunnel/m,
    )
    const listed = await cli(['endpoints', 'list'], {
      AFFILIATE_API_URL: url,
      AFFILIATE_API_KEY: KEY,
    })
    expect(listed.code).toBe(4)
    expect(listed.stderr).toMatch(
      /^hint: an HTML page answered, not the API: AFFILIATE_API_URL points at/m,
    )
  })
})

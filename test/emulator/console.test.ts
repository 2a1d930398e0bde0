/**
 * The emulator's web console in real headless Chromium (Debian's `chromium`,
 * driven by playwright-core): the banner's URL from the real CLI process, a
 * real receiver that fails the first attempt, the clock moved through the
 * control route, live updates without reloading, and nothing loaded from
 * anywhere but the emulator. Without Chromium the test fails, it never skips.
 */
import { once } from 'node:events'
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { verifyEvent } from '@affiliate-webhooks/core'
import { type BrowserContext, chromium, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Live, live } from '../support/cli-live.js'

const root = new URL('../..', import.meta.url).pathname
const CHROMIUM = '/usr/bin/chromium'
const ARTIFACTS = join(root, 'test/artifacts')
const MINUTE = 60_000

interface Received {
  eventId: string
  attempt: string
  body: string
  signature: string
  answered: number
}

/** A receiver that answers 500 with an error code to the first conversion attempt it sees, 200 after. */
async function startReceiver() {
  const received: Received[] = []
  let failedOnce = false
  const server: Server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8').on('data', (chunk: string) => {
      body += chunk
    })
    req.on('end', () => {
      const fail = !failedOnce && body.includes('"conversion.')
      if (fail) failedOnce = true
      const answered = fail ? 500 : 200
      received.push({
        eventId: String(req.headers['service-event-id']),
        attempt: String(req.headers['service-delivery-attempt']),
        body,
        signature: String(req.headers['service-signature']),
        answered,
      })
      res.writeHead(answered, { 'content-type': 'application/json' })
      res.end(
        fail
          ? JSON.stringify({ error: { code: 'handler_failed', message: 'database is down' } })
          : JSON.stringify({ received: true, outcome: 'processed' }),
      )
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    close: () => {
      server.closeAllConnections()
      return new Promise((resolve) => server.close(resolve))
    },
  }
}

/** One request with a chosen Host header (fetch will not send a foreign one). */
function getWithHost(url: string, host: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(url, { headers: { ...headers, host } }, (res) => {
      let body = ''
      res.setEncoding('utf8').on('data', (chunk: string) => {
        body += chunk
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('error', reject)
    req.end()
  })
}

let emulator: Live | undefined
let receiver: Awaited<ReturnType<typeof startReceiver>>
let context: BrowserContext
let profile: string
let base = ''
let consoleUrl = ''
let key = ''
let banner = ''

/** Starts `affiliate-webhooks emulator` and resolves with its banner. */
async function startCli(): Promise<string> {
  emulator = live(['emulator', '--port', '0'])
  await emulator.waitFor(/Ctrl-C/)
  return emulator.stdout()
}

const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  // biome-ignore lint/suspicious/noExplicitAny: the envelope as JSON
  const json = (await res.json()) as any
  expect(json.success, `${method} ${path}: ${json.message}`).toBe(true)
  return json.data
}
const advance = (ms: number) => api('POST', '/emulator/clock', { advanceMs: ms })

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (.ci/run does)`)
  }
  receiver = await startReceiver()
  banner = await startCli()
  consoleUrl = /^ {2}Console {5}(http:\/\/\S+)$/m.exec(banner)?.[1] ?? ''
  key = /API key\s+(la_[A-Za-z0-9]{32})/.exec(banner)?.[1] ?? ''
  base = new URL(consoleUrl).origin
  profile = mkdtempSync(join(tmpdir(), 'aw-console-chromium-'))
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  })
}, 30_000)

afterAll(async () => {
  await context?.close()
  await emulator?.stop()
  await receiver?.close()
  if (profile) rmSync(profile, { recursive: true, force: true })
})

/** Every request a page makes, to check none leaves the emulator. */
function watchRequests(page: Page): string[] {
  const urls: string[] = []
  page.on('request', (req) => {
    urls.push(req.url())
  })
  return urls
}

describe('the emulator console in Chromium', () => {
  it('shows deliveries live, replays, disables and enables, rotates, answers only its own Host and loads nothing from outside', async () => {
    expect(consoleUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/console\?token=[\w-]{20,}$/)
    const endpoint = await api('POST', '/v1/webhooks', {
      url: receiver.url,
      events: ['conversion.created', 'conversion.updated'],
    })

    // Batches go out on the clock's whole minutes. Step just past one: the next
    // comes a real minute later, so every attempt below waits for the test to
    // move the clock (whole minutes at a time).
    const { now } = await advance(0)
    await advance(MINUTE - (Date.parse(now) % MINUTE) + 10)

    const page = await context.newPage()
    const requests = watchRequests(page)
    let loads = 0
    page.on('load', () => {
      loads++
    })
    await page.goto(consoleUrl)
    const card = page.locator(`[data-endpoint="${endpoint.id}"]`)
    await card.getByText(receiver.url).waitFor()
    await card.getByText('0 of 20 failures in a row').waitFor()
    // The token leaves the address bar once read.
    expect(page.url()).toBe(`${base}/console`)

    // A second tab follows the same changes.
    const second = await context.newPage()
    const secondRequests = watchRequests(second)
    await second.goto(consoleUrl)
    await second.locator('#live.on').waitFor()
    // Back to the first tab: a background tab gets no animation frames to click in.
    await page.bringToFront()
    await page.locator('#live.on').waitFor()

    // Trigger: the delivery appears, pending.
    await page.locator('#trigger-id').fill('4242')
    await page.locator('#trigger-status').selectOption('pending')
    await page.locator('#trigger-saleAmount').fill('120.00')
    await page.locator('#trigger-commission').fill('9.60')
    await page.locator('#trigger-currency').fill('EUR')
    const triggeredAt = Date.now()
    await page.getByRole('button', { name: 'Trigger', exact: true }).click()
    const row = page.locator('#delivery-rows tr').filter({ hasText: '4242' })
    await row.getByText('pending').waitFor()
    // "Within a second", with room for a busy two-core machine.
    expect(Date.now() - triggeredAt).toBeLessThan(2_000)
    const [delivery] = await api('GET', `/v1/webhooks/${endpoint.id}/deliveries`)
    await row.getByText(delivery.eventId).waitFor()
    await row.getByText('conversion.created').waitFor()
    await second.locator('#delivery-rows tr').filter({ hasText: delivery.eventId }).waitFor()

    // Attempt 1 fails with the receiver's code; the page shows it without reloading.
    await row.getByRole('link', { name: delivery.eventId }).click()
    const view = page.locator('#delivery')
    await view
      .locator('#next-step')
      .getByText(/^attempt 1 at \d\d:\d\d UTC$/)
      .waitFor()
    await advance(MINUTE)
    const first = view.locator('tr[data-attempt="1"]').first()
    await first.getByText('500 failed').waitFor()
    await first.getByRole('cell', { name: 'handler_failed', exact: true }).waitFor()
    await first.getByText('database is down').waitFor()
    await first.getByText(/^\d+ ms$/).waitFor()
    await view
      .locator('#next-step')
      .getByText(/^attempt 2 at \d\d:\d\d UTC$/)
      .waitFor()
    await view.getByText('retrying').first().waitFor()
    await card.getByText('1 of 20 failures in a row').waitFor()
    await view.getByText('+1 min').first().waitFor()
    await view.getByText('+24 h').first().waitFor()

    // The clock moves: attempt 2 succeeds, in both tabs, without a reload.
    await advance(2 * MINUTE)
    await view.locator('tr[data-attempt="2"]').getByText('200 ok').waitFor()
    await view.locator('#next-step').getByText('delivered: nothing more to send').waitFor()
    await row.getByText('succeeded').waitFor()
    await second
      .locator('#delivery-rows tr')
      .filter({ hasText: delivery.eventId })
      .getByText('succeeded')
      .waitFor()
    await card.getByText('0 of 20 failures in a row').waitFor()
    expect(receiver.received.map((r) => [r.attempt, r.answered])).toEqual([
      ['1', 500],
      ['2', 200],
    ])

    // Filter by status: succeeded shows it, failed does not.
    await page.locator('#filter-status').selectOption('failed')
    await page.locator('#delivery-rows tr').first().waitFor({ state: 'detached' })
    await page.locator('#filter-status').selectOption('succeeded')
    await row.waitFor()
    await page.locator('#filter-status').selectOption('')

    // Replay: a new round, sent when the clock moves.
    await view.getByRole('button', { name: 'Replay' }).click()
    await view
      .locator('#next-step')
      .getByText(/^attempt 1 at /)
      .waitFor()
    await advance(MINUTE)
    await view.getByRole('heading', { name: 'Replay 1' }).waitFor()
    await view.locator('#next-step').getByText('delivered: nothing more to send').waitFor()
    expect(receiver.received).toHaveLength(3)
    expect(receiver.received[2]?.eventId).toBe(delivery.eventId)

    mkdirSync(ARTIFACTS, { recursive: true })
    await page
      .locator('section', { has: page.locator('#deliveries-title') })
      .screenshot({ path: join(ARTIFACTS, 'console-delivery.png') })

    // Disable and enable: the API agrees each time.
    await card.getByRole('button', { name: 'Disable', exact: true }).click()
    await card.getByRole('button', { name: 'Enable', exact: true }).waitFor()
    expect((await api('GET', `/v1/webhooks/${endpoint.id}`)).status).toBe('disabled')
    await second.locator(`[data-endpoint="${endpoint.id}"]`).getByText('disabled').first().waitFor()
    await card.getByRole('button', { name: 'Enable', exact: true }).click()
    await card.getByRole('button', { name: 'Disable', exact: true }).waitFor()
    expect((await api('GET', `/v1/webhooks/${endpoint.id}`)).status).toBe('active')

    // Rotate: the new secret is shown once and is the one that now signs.
    expect(await page.content()).not.toContain('whsec_')
    await card.getByRole('button', { name: 'Rotate secret' }).click()
    const secret = (await page.locator('#secret-value').textContent()) ?? ''
    expect(secret).toMatch(/^whsec_/)
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base })
    await page.getByRole('button', { name: 'Copy' }).click()
    await page.getByText('Secret copied.').waitFor()
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret)
    await card.getByRole('button', { name: 'Send test' }).click()
    await page.locator('#delivery-rows tr').filter({ hasText: 'webhook.test' }).waitFor()
    await advance(MINUTE)
    await page
      .locator('#delivery-rows tr')
      .filter({ hasText: 'webhook.test' })
      .getByText('succeeded')
      .waitFor()
    const test = receiver.received.at(-1) as Received
    const event = await verifyEvent({
      secret,
      headers: { 'service-signature': test.signature },
      rawBody: new TextEncoder().encode(test.body),
      // Service time ran ahead of this machine's clock: the secret is the point here.
      tolerance: 10 * 24 * 3600,
    })
    expect(event.type).toBe('webhook.test')
    expect(await second.content()).not.toContain(secret)
    await page.reload()
    await card.getByText(receiver.url).waitFor()
    expect(await page.content()).not.toContain(secret)
    expect(await page.content()).not.toContain('whsec_')
    expect(await page.content()).not.toContain(key)
    expect(loads).toBe(2)

    // Nothing came from anywhere but the emulator, in either tab.
    const all = [...requests, ...secondRequests]
    expect(all.length).toBeGreaterThan(5)
    expect(all.filter((url) => new URL(url).origin !== base)).toEqual([])
    await second.close()
    await page.close()
  }, 60_000)

  it('with two endpoints every delivery row names its endpoint; a link opens one delivery, another one endpoint', async () => {
    const made: { id: string }[] = []
    for (const name of ['a', 'b']) {
      made.push(
        await api('POST', '/v1/webhooks', {
          url: `${receiver.url}?to=${name}`,
          events: ['conversion.created'],
        }),
      )
    }
    const emitted = await api('POST', '/emulator/conversions', { id: 7777, status: 'pending' })
    const ours = emitted.deliveries.filter((d: { webhookId: string }) =>
      made.some((e) => e.id === d.webhookId),
    )
    expect(ours).toHaveLength(2)
    const page = await context.newPage()
    await page.goto(consoleUrl)
    for (const delivery of ours) {
      const row = page
        .locator('#delivery-rows tr')
        .filter({ hasText: emitted.event.id })
        .filter({ hasText: delivery.webhookId })
      await row.waitFor()
      // Each row links to its delivery's attempt view and to its endpoint.
      expect(await row.getByRole('link', { name: emitted.event.id }).getAttribute('href')).toBe(
        `#delivery=${delivery.id}`,
      )
      expect(await row.getByRole('link', { name: delivery.webhookId }).getAttribute('href')).toBe(
        `#endpoint=${delivery.webhookId}`,
      )
    }
    // The link is an address: loaded afresh in a tab holding the token, it shows that delivery.
    const [first, second] = ours
    await page.goto(`${base}/console#delivery=${first.id}`)
    await page.reload()
    await page.locator('#delivery h3').getByText(first.id).waitFor()
    await page.locator('#delivery').getByText(first.webhookId).waitFor()
    // An endpoint's link shows only its deliveries.
    await page
      .locator('#delivery-rows tr')
      .filter({ hasText: second.webhookId })
      .getByRole('link', { name: second.webhookId })
      .click()
    await page.waitForURL(`${base}/console#endpoint=${second.webhookId}`)
    // The page applies the address on its hashchange, after the URL has changed.
    await expect
      .poll(() => page.locator('#filter-endpoint').inputValue(), { timeout: 10_000 })
      .toBe(second.webhookId)
    await page
      .locator('#delivery-rows tr')
      .filter({ hasText: first.webhookId })
      .first()
      .waitFor({ state: 'detached' })
    await page.locator('#delivery-rows tr').filter({ hasText: second.webhookId }).first().waitFor()
    for (const endpoint of made) await api('DELETE', `/v1/webhooks/${endpoint.id}`)
  })

  it('asks for the API key without the token, and a foreign Host gets nothing', async () => {
    // Batches go out on the clock's whole minutes. Step just past one: the next
    // comes a real minute later, so every attempt below waits for the test to
    // move the clock (whole minutes at a time).
    const { now } = await advance(0)
    await advance(MINUTE - (Date.parse(now) % MINUTE) + 10)

    const page = await context.newPage()
    const requests = watchRequests(page)
    await page.goto(`${base}/console`)
    await page.getByLabel('API key').fill(`la_${'x'.repeat(32)}`)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByText('Unknown API key').waitFor()
    await page.getByLabel('API key').fill(key)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.locator('#live.on').waitFor()
    await page.getByText(receiver.url).first().waitFor()
    expect(await page.content()).not.toContain(key)

    // The catalogue with its filters; a pending application approved from the page.
    const [manual] = await api('GET', '/v1/programs?approvalType=manual')
    const applied = await api('POST', '/v1/programs/applications', {
      programId: manual.id,
      channelId: 7,
    })
    expect(applied.status).toBe('pending')
    await page.locator('#program-approvalType').selectOption('manual')
    await page.getByRole('button', { name: 'Filter' }).click()
    const programRows = page.locator('#program-rows tr')
    await programRows.filter({ hasText: 'auto' }).first().waitFor({ state: 'detached' })
    expect(await programRows.count()).toBeGreaterThan(0)
    const application = page
      .locator('#application-rows tr')
      .filter({ hasText: String(applied.applicationId) })
    await application.getByText('pending').waitFor()
    await application.getByRole('button', { name: 'Approve' }).click()
    await application.getByText('approved').waitFor()
    const applications = await api('GET', '/v1/programs/applications')
    expect(
      applications.find((a: { applicationId: number }) => a.applicationId === applied.applicationId)
        ?.status,
    ).toBe('approved')
    expect(requests.filter((url) => new URL(url).origin !== base)).toEqual([])
    await page.close()

    const token = new URL(consoleUrl).searchParams.get('token') as string
    const port = new URL(base).port
    for (const path of [
      '/console',
      `/console?token=${token}`,
      '/console/console.js',
      '/console/api/overview',
      `/console/events?token=${token}`,
    ]) {
      const foreign = await getWithHost(`${base}${path}`, `rebound.example:${port}`, {
        'x-console-token': token,
      })
      expect(foreign.status, path).toBe(421)
      expect(foreign.body).not.toContain('whsec_')
      expect(foreign.body).not.toContain(receiver.url)
      expect(foreign.body).not.toContain('<html')
    }
    // The same routes at the emulator's own address, and localhost, answer.
    const own = await getWithHost(`${base}/console/api/overview`, `127.0.0.1:${port}`, {
      'x-console-token': token,
    })
    expect(own.status).toBe(200)
    expect(own.body).toContain(receiver.url)
    expect(own.body).not.toContain('whsec_')
    expect((await getWithHost(`${base}/console`, `localhost:${port}`)).status).toBe(200)
    // Without the token the console's data stays shut; /v1 keeps the service's rules.
    expect((await getWithHost(`${base}/console/api/overview`, `127.0.0.1:${port}`)).status).toBe(
      401,
    )
    expect((await getWithHost(`${base}/v1/health`, `rebound.example:${port}`)).status).toBe(200)
    expect((await getWithHost(`${base}/v1/webhooks`, `rebound.example:${port}`)).status).toBe(401)
  }, 30_000)
})

/**
 * @affiliate-webhooks/client's programs and applications against the emulator
 * over real HTTP: list walks every page and yields each program once while the
 * catalogue changes under it, get with channelId, applications.create with the
 * typed duplicate error and a lost answer, applications.list; and
 * webhooks.create's lost-answer look-up on a URL the service stores in
 * canonical form.
 */
import {
  createClient,
  type DuplicateApplicationError,
  isDuplicateApplicationError,
  isServiceError,
  type ProgramSummary,
  type ServiceError,
} from '@affiliate-webhooks/client'
import { createClock } from '@affiliate-webhooks/emulator'
import { afterEach, describe, expect, it } from 'vitest'
import { type Harness, startEmulator } from '../support/emulator-harness.js'

const KEY = `la_${'c'.repeat(32)}`
const START = Date.UTC(2026, 0, 5, 10, 0, 0)

const harnesses: Harness[] = []
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.close()))
})
async function start() {
  const h = await startEmulator({ apiKeys: [KEY], clock: createClock({ start: START }) })
  harnesses.push(h)
  return h
}
const clientOf = (h: Harness, fetcher?: typeof fetch) =>
  createClient({
    apiKey: KEY,
    baseUrl: h.base,
    retry: { baseDelayMs: 5, maxDelayMs: 20 },
    ...(fetcher ? { fetch: fetcher } : {}),
  })
const caught = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected a rejection')
    },
    (error: unknown) => {
      expect(isServiceError(error)).toBe(true)
      return error as ServiceError
    },
  )
async function addProgram(h: Harness, fields: Record<string, unknown> = {}): Promise<number> {
  const reply = await h.call('POST', '/emulator/programs', {
    body: { payoutType: 'cps', networkPayout: '4', ...fields },
  })
  expect(reply.status).toBe(201)
  return reply.body.data.id
}
async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const rows: T[] = []
  for await (const row of iterable) rows.push(row)
  return rows
}

/** A fetch that lets the first request matching `lose` reach the service and then drops its answer. */
function losingFetch(lose: (method: string, url: string) => boolean): typeof fetch {
  let lost = false
  return async (input, init) => {
    const response = await fetch(input, init)
    if (!lost && lose(init?.method ?? 'GET', String(input))) {
      lost = true
      await response.text()
      throw new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } })
    }
    return response
  }
}

describe('client programs', () => {
  it('list walks every page with the filters, newest first; get adds the retrieve fields and scopes status', async () => {
    const h = await start()
    for (let i = 0; i < 23; i++) await addProgram(h, { merchantName: `Shop ${i}` })
    const api = clientOf(h)
    const all = await collect(api.programs.list({ size: 5 }))
    expect(all).toHaveLength(31)
    expect(new Set(all.map((p) => p.id)).size).toBe(31)
    expect(all.at(-1)?.id).toBe(40)
    expect(all[0]).not.toHaveProperty('description')
    const manual = await collect(api.programs.list({ approvalType: 'manual', payoutType: 'cps' }))
    expect(manual.map((p) => p.id)).toEqual([46, 41])
    const garden = await collect(api.programs.list({ category: 'home_garden', search: 'garten' }))
    expect(garden.map((p) => p.merchantName)).toEqual(['Gartenglück'])
    const program = await api.programs.get(41, { channelId: 7 })
    expect(program).toMatchObject({ id: 41, payout: '5.95', status: 'not_applied' })
    expect(program.regions).toEqual(['DE', 'AT', 'CH'])
    const missing = await caught(api.programs.get(9999))
    expect(missing).toMatchObject({ status: 404, code: 'program_not_found' })
  })

  it('a walk while programs are added and removed yields each program once, and every program that stayed', async () => {
    const h = await start()
    for (let i = 0; i < 20; i++) await addProgram(h, { merchantName: `Shop ${i}` })
    const before = (await collect(clientOf(h).programs.list())).map((p) => p.id)
    expect(before).toHaveLength(28)
    const api = clientOf(h)
    const seen: ProgramSummary[] = []
    const added: number[] = []
    const removed: number[] = []
    for await (const program of api.programs.list({ size: 4 })) {
      seen.push(program)
      // At page boundaries, in turn: a new program on top (pushes the unread
      // rows down, so one repeats), or a program already read removed (pulls
      // them up, so one is skipped on this pass).
      const boundary = seen.length / 4
      if (Number.isInteger(boundary) && boundary <= 6) {
        if (boundary % 2 === 1) {
          added.push(await addProgram(h, { merchantName: `New ${seen.length}` }))
        } else {
          const gone = seen[seen.length - 2]?.id as number
          expect((await h.call('DELETE', `/emulator/programs/${gone}`)).status).toBe(200)
          removed.push(gone)
        }
      }
    }
    const ids = seen.map((p) => p.id)
    expect(new Set(ids).size).toBe(ids.length)
    const stayed = before.filter((id) => !removed.includes(id))
    expect(stayed.filter((id) => !ids.includes(id))).toEqual([])
    expect(removed).toHaveLength(3)
    expect(added).toHaveLength(3)
  })

  it('reads the paging fields from the first answer: a service that stops sending them still ends the walk', async () => {
    const h = await start()
    for (let i = 0; i < 6; i++) await addProgram(h)
    let calls = 0
    const api = clientOf(h, async (input, init) => {
      calls++
      const response = await fetch(input, init)
      const body = await response.json()
      const page = new URL(String(input)).searchParams.get('page')
      // Only the first page carries them; the others are bare.
      if (page !== '1') body.pagination = undefined
      return new Response(JSON.stringify(body), {
        status: response.status,
        headers: response.headers,
      })
    })
    const all = await collect(api.programs.list({ size: 5 }))
    expect(all).toHaveLength(14)
    expect(calls).toBe(3)
  })
})

describe('client applications', () => {
  it('create: approved at once for auto, pending for manual; a second is DuplicateApplicationError with applicationId and status', async () => {
    const h = await start()
    const api = clientOf(h)
    const auto = await api.applications.create({ programId: 40, channelId: 7, note: 'Hello' })
    expect(auto).toMatchObject({ status: 'approved', rejectionReason: null })
    expect(auto.decidedAt).toBe(auto.appliedAt)
    const manual = await api.applications.create({ programId: 41, channelId: 7 })
    expect(manual).toMatchObject({ status: 'pending', decidedAt: null })
    const error = await caught(api.applications.create({ programId: 41, channelId: 7 }))
    expect(isDuplicateApplicationError(error)).toBe(true)
    const duplicate = error as DuplicateApplicationError
    expect(duplicate).toMatchObject({
      status: 409,
      code: 'duplicate_application',
      applicationId: manual.applicationId,
      applicationStatus: 'pending',
      application: { applicationId: manual.applicationId, status: 'pending' },
    })
    expect(duplicate.message).toContain('duplicate_application')
    // Other refusals stay plain ServiceErrors.
    const notFound = await caught(api.applications.create({ programId: 40, channelId: 999 }))
    expect(notFound).toMatchObject({ status: 404, code: 'channel_not_found' })
    expect(isDuplicateApplicationError(notFound)).toBe(false)
    const channel = await h.call('POST', '/emulator/channels', {
      body: { domain: 'fresh.example', verified: false },
    })
    const unverified = await caught(
      api.applications.create({ programId: 40, channelId: channel.body.data.id }),
    )
    expect(unverified).toMatchObject({ status: 403, code: 'channel_not_verified' })
  })

  it('create after a lost answer: repeats, and the 409 that follows returns the application the first try made', async () => {
    const h = await start()
    const api = clientOf(
      h,
      losingFetch((method, url) => method === 'POST' && url.endsWith('/v1/programs/applications')),
    )
    const made = await api.applications.create({ programId: 41, channelId: 7 })
    expect(made).toMatchObject({ status: 'pending', merchantName: 'Kaffeewerk' })
    const all = await collect(clientOf(h).applications.list())
    expect(all.map((a) => a.applicationId)).toEqual([made.applicationId])
  })

  it('list: every application with merchantName, newest first, with filters', async () => {
    const h = await start()
    const api = clientOf(h)
    const made = []
    for (const programId of [40, 41, 42, 43, 44, 45]) {
      made.push(await api.applications.create({ programId, channelId: 7 }))
      await h.advance(1000)
    }
    const all = await collect(api.applications.list({ size: 4 }))
    expect(all.map((a) => a.applicationId)).toEqual(made.map((a) => a.applicationId).reverse())
    expect(all.every((a) => typeof a.merchantName === 'string')).toBe(true)
    const pending = await collect(api.applications.list({ status: 'pending' }))
    expect(pending.map((a) => a.merchantName)).toEqual(['Stadtrad Versicherung', 'Kaffeewerk'])
    const one = await collect(api.applications.list({ programId: 42, channelId: 7 }))
    expect(one).toHaveLength(1)
  })
})

describe('client webhooks.create: a lost answer on a URL stored in canonical form', () => {
  it('finds the endpoint it made (https://example.com stored as https://example.com/) instead of making a second', async () => {
    const h = await start()
    const api = clientOf(
      h,
      losingFetch((method, url) => method === 'POST' && url.endsWith('/v1/webhooks')),
    )
    const endpoint = await api.webhooks.create({
      url: 'https://Example.com',
      events: ['conversion.created'],
    })
    expect(endpoint.url).toBe('https://example.com/')
    expect(endpoint.secret).toMatch(/^whsec_/)
    const all = await clientOf(h).webhooks.list()
    expect(all.map((e) => e.id)).toEqual([endpoint.id])
  })
})

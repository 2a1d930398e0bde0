/**
 * The emulator's programs and applications over real HTTP: the default
 * catalogue, every filter, paging, list and retrieve fields, the 70% payout,
 * per-channel status, the application state table with every error code, the
 * control routes for programs, channels and reviews, and --catalog files.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createClock } from '@affiliate-webhooks/emulator'
import { afterEach, describe, expect, it } from 'vitest'
import {
  type Harness,
  type Reply,
  startEmulator,
  startReceiver,
} from '../support/emulator-harness.js'

const MAIN_KEY = `la_${'m'.repeat(32)}`
const READ_KEY = `la_${'r'.repeat(32)}`
const WRITE_KEY = `la_${'w'.repeat(32)}`
const START = Date.UTC(2026, 0, 5, 10, 0, 0)

const harnesses: Harness[] = []
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.close()))
})
async function start(options: Parameters<typeof startEmulator>[0] = {}) {
  const harness = await startEmulator({
    apiKeys: [MAIN_KEY, `${READ_KEY}:programs:read`, `${WRITE_KEY}:programs:write`],
    clock: createClock({ start: START }),
    ...options,
  })
  harnesses.push(harness)
  return harness
}

function expectFailure(reply: Reply, status: number, code: string) {
  expect(reply.status, JSON.stringify(reply.body)).toBe(status)
  expect(reply.body.success).toBe(false)
  expect(reply.body).not.toHaveProperty('data')
  expect(reply.body.error.code).toBe(code)
}

function expectInvalid(reply: Reply, fields: Record<string, 'required' | 'invalid_format'>) {
  expect(reply.status).toBe(400)
  expect(
    Object.fromEntries(
      reply.body.error.map((e: { field: string; code: string }) => [e.field, e.code]),
    ),
  ).toEqual(fields)
}

const ok = (reply: Reply, status = 200) => {
  expect(reply.status, JSON.stringify(reply.body)).toBe(status)
  expect(reply.body.success).toBe(true)
  return reply.body.data
}
const ids = (reply: Reply): number[] => ok(reply).map((program: { id: number }) => program.id)

/** POST /emulator/programs with these fields (cps unless said); resolves to the program. */
async function addProgram(h: Harness, fields: Record<string, unknown>) {
  return ok(
    await h.call('POST', '/emulator/programs', { body: { payoutType: 'cps', ...fields } }),
    201,
  )
}
async function addChannel(h: Harness, body: Record<string, unknown>): Promise<number> {
  return ok(await h.call('POST', '/emulator/channels', { body }), 201).id
}
const apply = (h: Harness, programId: number, channelId: number, key?: string) =>
  h.call('POST', '/v1/programs/applications', {
    body: { programId, channelId },
    ...(key ? { key } : {}),
  })

const LIST_FIELDS = [
  'approvalType',
  'category',
  'cookieDays',
  'currency',
  'id',
  'merchantDomain',
  'merchantName',
  'payout',
  'payoutType',
  'payoutUnit',
  'status',
  'supportsDeepLinks',
]

describe('emulator programs: catalogue, fields, payout', () => {
  it('starts with a default catalogue and channel 7: list entries without the retrieve-only fields', async () => {
    const h = await start()
    const reply = await h.call('GET', '/v1/programs')
    const rows = ok(reply)
    expect(rows.length).toBe(8)
    for (const row of rows) expect(Object.keys(row).sort()).toEqual(LIST_FIELDS)
    expect(reply.body.pagination).toEqual({ page: 1, size: 10, total: 8, lastPage: 1 })
    // Newest first: the defaults were added in id order.
    expect(rows.map((row: { id: number }) => row.id)).toEqual([47, 46, 45, 44, 43, 42, 41, 40])
    const one = ok(await h.call('GET', '/v1/programs/40'))
    expect(Object.keys(one).sort()).toEqual(
      [...LIST_FIELDS, 'description', 'logoUrl', 'regions'].sort(),
    )
    expect(one).toMatchObject({
      merchantName: 'Nordlicht Outdoor',
      category: 'sports_outdoors',
      payout: '7.00',
      payoutUnit: 'percent',
      status: 'not_applied',
      regions: ['DE', 'AT', 'CH'],
    })
    // A program the network said little about shows nulls, never a guess.
    expect(ok(await h.call('GET', '/v1/programs/47'))).toMatchObject({
      category: null,
      payout: null,
      payoutUnit: null,
      currency: null,
      cookieDays: null,
      approvalType: null,
      regions: [],
      logoUrl: null,
    })
  })

  it('POST /emulator/programs: 201 with the program as the API shows it; payout is 70% as a two-decimal string', async () => {
    const h = await start()
    const program = await addProgram(h, {
      merchantName: 'Bergkäse',
      merchantDomain: 'www.Bergkaese.example',
      category: 'Food &amp; Drink / Cheese',
      networkPayout: '0.35',
      payoutUnit: 'fixed',
      currency: 'EUR',
      cookieDays: 7,
      approvalType: 'manual',
      supportsDeepLinks: true,
      description: 'Alpine cheese.',
      regions: ['AT'],
      logoUrl: 'https://logo.example/b.png',
    })
    expect(program).toMatchObject({
      merchantDomain: 'bergkaese.example',
      category: 'food_drink_cheese',
      payout: '0.25',
      status: 'not_applied',
      description: 'Alpine cheese.',
    })
    expect(typeof program.id).toBe('number')
    expect(ok(await h.call('GET', `/v1/programs/${program.id}`))).toEqual(program)
    for (const [rate, shown] of [
      ['10', '7.00'],
      ['8.5', '5.95'],
      ['3.75', '2.63'],
      [12, '8.40'],
      ['0', '0.00'],
    ] as const) {
      expect((await addProgram(h, { networkPayout: rate })).payout, String(rate)).toBe(shown)
    }
    expectInvalid(
      await h.call('POST', '/emulator/programs', {
        body: {
          payoutType: 'cpa',
          networkPayout: '-1',
          regions: ['de'],
          approvalType: 'sometimes',
        },
      }),
      {
        payoutType: 'invalid_format',
        networkPayout: 'invalid_format',
        regions: 'invalid_format',
        approvalType: 'invalid_format',
      },
    )
    // Every field may be absent: nulls, and cps for the type the API never shows null.
    expect(ok(await h.call('POST', '/emulator/programs', { body: {} }), 201)).toMatchObject({
      payoutType: 'cps',
      payout: null,
      merchantName: null,
      regions: [],
      supportsDeepLinks: false,
    })
    expectInvalid(await h.call('POST', '/emulator/programs', { body: [] }), {
      body: 'invalid_format',
    })
  })

  it('DELETE /emulator/programs/{id} deactivates: gone from the list, 404 program_not_found on retrieve', async () => {
    const h = await start()
    ok(await h.call('DELETE', '/emulator/programs/42'))
    expect(ids(await h.call('GET', '/v1/programs'))).not.toContain(42)
    expectFailure(await h.call('GET', '/v1/programs/42'), 404, 'program_not_found')
    expectFailure(await h.call('DELETE', '/emulator/programs/42'), 404, 'program_not_found')
    for (const id of ['9999', 'abc', '-1']) {
      expectFailure(await h.call('GET', `/v1/programs/${id}`), 404, 'program_not_found')
    }
  })
})

describe('emulator programs: filters and paging', () => {
  it('search, category (by the slug rule), payoutType, approvalType, combined with AND', async () => {
    const h = await start()
    const get = async (query: string) => ids(await h.call('GET', `/v1/programs?${query}`))
    expect(await get('search=kaffee')).toEqual([41])
    // On the domain too, case-insensitively on the name.
    expect(await get('search=PIXEL')).toEqual([42])
    expect(await get('search=leseratte.example')).toEqual([45])
    expect(await get('category=home_garden')).toEqual([44])
    expect(await get(`category=${encodeURIComponent('Home & Garden')}`)).toEqual([44])
    expect(await get('category=food_drink')).toEqual([41])
    expect(await get('payoutType=cpc')).toEqual([43])
    expect(await get('approvalType=manual')).toEqual([46, 43, 41])
    expect(await get('approvalType=manual&payoutType=cps')).toEqual([46, 41])
    expect(await get('approvalType=manual&payoutType=cps&search=reise')).toEqual([46])
    expect(await get('search=nothing-like-this')).toEqual([])
  })

  it('pages: page and size, 1 to 100, default 10, the paging fields beside data; bad values are 400', async () => {
    const h = await start()
    for (let i = 0; i < 15; i++) await addProgram(h, { merchantName: `Shop ${i}` })
    const first = await h.call('GET', '/v1/programs')
    expect(ok(first)).toHaveLength(10)
    expect(first.body.pagination).toEqual({ page: 1, size: 10, total: 23, lastPage: 3 })
    const pages: number[] = []
    for (let page = 1; page <= 3; page++) {
      pages.push(...ids(await h.call('GET', `/v1/programs?page=${page}&size=10`)))
    }
    expect(pages).toEqual(ids(await h.call('GET', '/v1/programs?size=100')))
    expect(new Set(pages).size).toBe(23)
    expect(ids(await h.call('GET', '/v1/programs?page=4'))).toEqual([])
    expectInvalid(await h.call('GET', '/v1/programs?page=0&size=101'), {
      page: 'invalid_format',
      size: 'invalid_format',
    })
    expectInvalid(
      await h.call('GET', '/v1/programs?payoutType=cpa&approvalType=x&status=won&channelId=abc'),
      {
        payoutType: 'invalid_format',
        approvalType: 'invalid_format',
        status: 'invalid_format',
        channelId: 'invalid_format',
      },
    )
  })

  it('status: best across the caller channels without channelId, scoped with it; the filter follows', async () => {
    const h = await start()
    const second = await addChannel(h, { domain: 'second.example', approved: true, verified: true })
    ok(await apply(h, 41, 7), 201) // manual: pending on channel 7
    ok(await apply(h, 40, second), 201) // auto: approved on the second channel
    ok(await apply(h, 41, second), 201) // pending on the second too
    const status = async (id: number, channelId?: number) =>
      ok(await h.call('GET', `/v1/programs/${id}${channelId ? `?channelId=${channelId}` : ''}`))
        .status
    expect(await status(40)).toBe('approved')
    expect(await status(40, 7)).toBe('not_applied')
    expect(await status(40, second)).toBe('approved')
    expect(await status(41)).toBe('pending')
    const [application] = ok(
      await h.call('GET', '/v1/programs/applications?programId=41&channelId=7'),
    )
    ok(
      await h.call('POST', `/emulator/applications/${application.applicationId}/decision`, {
        body: { status: 'approved' },
      }),
    )
    expect(await status(41)).toBe('approved')
    expect(await status(41, second)).toBe('pending')
    const list = async (query: string) => ids(await h.call('GET', `/v1/programs?${query}`))
    expect(await list('status=approved')).toEqual([41, 40])
    expect(await list(`status=approved&channelId=${second}`)).toEqual([40])
    expect(await list(`status=pending&channelId=${second}`)).toEqual([41])
    expect(await list('status=not_applied&channelId=7')).not.toContain(41)
    expect(await list('status=rejected')).toEqual([])
    // A channel that is not the caller's names nothing.
    expectFailure(await h.call('GET', '/v1/programs?channelId=999'), 404, 'channel_not_found')
    expectFailure(await h.call('GET', '/v1/programs/40?channelId=999'), 404, 'channel_not_found')
  })
})

describe('emulator applications: the state table', () => {
  it('auto: approved at once with decidedAt = appliedAt; manual: pending with decidedAt null, then the review', async () => {
    const h = await start()
    const auto = ok(await apply(h, 40, 7), 201)
    expect(auto).toMatchObject({ status: 'approved', rejectionReason: null })
    expect(typeof auto.applicationId).toBe('number')
    expect(auto.decidedAt).toBe(auto.appliedAt)
    // On the emulator's clock (which runs on from START).
    expect(Date.parse(auto.appliedAt) - START).toBeGreaterThanOrEqual(0)
    expect(Date.parse(auto.appliedAt) - START).toBeLessThan(60_000)
    const manual = ok(await apply(h, 41, 7), 201)
    expect(manual).toMatchObject({ status: 'pending', decidedAt: null, rejectionReason: null })
    await h.advance(3_600_000)
    const decided = ok(
      await h.call('POST', `/emulator/applications/${manual.applicationId}/decision`, {
        body: { status: 'rejected' },
      }),
    )
    expect(decided).toMatchObject({ status: 'rejected', appliedAt: manual.appliedAt })
    expect(Date.parse(decided.decidedAt) - Date.parse(manual.appliedAt)).toBeGreaterThanOrEqual(
      3_600_000,
    )
    // Only a pending application is reviewed.
    expectFailure(
      await h.call('POST', `/emulator/applications/${manual.applicationId}/decision`, {
        body: { status: 'approved' },
      }),
      409,
      'application_not_pending',
    )
    expectFailure(
      await h.call('POST', '/emulator/applications/99999/decision', {
        body: { status: 'approved' },
      }),
      404,
      'application_not_found',
    )
    expectInvalid(
      await h.call('POST', `/emulator/applications/${manual.applicationId}/decision`, {
        body: { status: 'maybe' },
      }),
      { status: 'invalid_format' },
    )
  })

  it('a second application of the pair, in any state, is 409 duplicate_application with applicationId and status', async () => {
    const h = await start()
    const first = ok(await apply(h, 41, 7), 201)
    const again = await apply(h, 41, 7)
    expectFailure(again, 409, 'duplicate_application')
    expect(again.body.error).toEqual({
      code: 'duplicate_application',
      applicationId: first.applicationId,
      status: 'pending',
    })
    await h.call('POST', `/emulator/applications/${first.applicationId}/decision`, {
      body: { status: 'rejected' },
    })
    // A rejection cannot be re-applied through the API.
    expect((await apply(h, 41, 7)).body.error).toMatchObject({
      applicationId: first.applicationId,
      status: 'rejected',
    })
    // The same program on another channel is another pair.
    const other = await addChannel(h, { domain: 'other.example', approved: true, verified: true })
    ok(await apply(h, 41, other), 201)
  })

  it('404 program_not_found, 404 channel_not_found (absent or not the caller), 403 channel_not_verified, 400 validation', async () => {
    const h = await start()
    ok(await h.call('DELETE', '/emulator/programs/43'))
    expectFailure(await apply(h, 9999, 7), 404, 'program_not_found')
    expectFailure(await apply(h, 43, 7), 404, 'program_not_found')
    expectFailure(await apply(h, 40, 9999), 404, 'channel_not_found')
    const foreign = await addChannel(h, { domain: 'theirs.example', own: false })
    expectFailure(await apply(h, 40, foreign), 404, 'channel_not_found')
    const unapproved = await addChannel(h, {
      domain: 'new.example',
      approved: false,
      verified: true,
    })
    const unverified = await addChannel(h, {
      domain: 'tagless.example',
      approved: true,
      verified: false,
    })
    expectFailure(await apply(h, 40, unapproved), 403, 'channel_not_verified')
    expectFailure(await apply(h, 40, unverified), 403, 'channel_not_verified')
    expectInvalid(await h.call('POST', '/v1/programs/applications', { body: {} }), {
      programId: 'required',
      channelId: 'required',
    })
    expectInvalid(
      await h.call('POST', '/v1/programs/applications', {
        body: { programId: '40', channelId: 7.5, note: 'x'.repeat(501) },
      }),
      { programId: 'invalid_format', channelId: 'invalid_format', note: 'invalid_format' },
    )
    // A note of 500 characters is accepted (and not stored).
    const made = ok(
      await h.call('POST', '/v1/programs/applications', {
        body: { programId: 40, channelId: 7, note: 'é'.repeat(500) },
      }),
      201,
    )
    expect(made).not.toHaveProperty('note')
    expectFailure(
      await h.call('POST', '/v1/programs/applications', { raw: '{"programId": ' }),
      400,
      'malformed_json',
    )
  })

  it('GET /v1/programs/applications: newest first, each with merchantName, filters and paging', async () => {
    const h = await start()
    const second = await addChannel(h, { domain: 'second.example' })
    const made: number[] = []
    for (const [programId, channelId] of [
      [40, 7],
      [41, 7],
      [42, second],
      [46, second],
    ] as const) {
      made.push(ok(await apply(h, programId, channelId), 201).applicationId)
      await h.advance(1000)
    }
    const all = await h.call('GET', '/v1/programs/applications')
    const rows = ok(all)
    expect(rows.map((row: { applicationId: number }) => row.applicationId)).toEqual(
      [...made].reverse(),
    )
    expect(rows[0]).toMatchObject({ merchantName: 'Reisefieber', status: 'pending' })
    expect(all.body.pagination).toEqual({ page: 1, size: 10, total: 4, lastPage: 1 })
    const count = async (query: string) =>
      ok(await h.call('GET', `/v1/programs/applications?${query}`)).length
    expect(await count('status=pending')).toBe(2)
    expect(await count('status=approved')).toBe(2)
    expect(await count(`channelId=${second}`)).toBe(2)
    expect(await count('programId=41')).toBe(1)
    expect(await count(`programId=41&channelId=${second}`)).toBe(0)
    const page2 = await h.call('GET', '/v1/programs/applications?page=2&size=3')
    expect(ok(page2).map((row: { applicationId: number }) => row.applicationId)).toEqual([made[0]])
    expectInvalid(await h.call('GET', '/v1/programs/applications?status=not_applied&size=0'), {
      status: 'invalid_format',
      size: 'invalid_format',
    })
    // A removed program's applications still name its merchant.
    ok(await h.call('DELETE', '/emulator/programs/40'))
    const last = ok(await h.call('GET', '/v1/programs/applications?programId=40'))
    expect(last[0].merchantName).toBe('Nordlicht Outdoor')
  })

  it('scopes: reading needs programs:read (or write), applying programs:write', async () => {
    const h = await start()
    expect((await h.call('GET', '/v1/programs', { key: READ_KEY })).status).toBe(200)
    expect((await h.call('GET', '/v1/programs/40', { key: WRITE_KEY })).status).toBe(200)
    expect((await h.call('GET', '/v1/programs/applications', { key: WRITE_KEY })).status).toBe(200)
    const refused = await apply(h, 40, 7, READ_KEY)
    expectFailure(refused, 403, 'insufficient_scope')
    expect(refused.body.error).toMatchObject({
      required: 'programs:write',
      granted: ['programs:read'],
    })
    ok(await apply(h, 40, 7, WRITE_KEY), 201)
  })
})

describe('emulator channels and conversions', () => {
  it('POST /emulator/channels: 201 { id }, 409 duplicate_channel for a known domain, 400 for a bad one', async () => {
    const h = await start()
    const reply = await h.call('POST', '/emulator/channels', {
      body: { domain: 'blog.example', approved: true, verified: true },
    })
    expect(ok(reply, 201)).toEqual({ id: expect.any(Number) })
    expectFailure(
      await h.call('POST', '/emulator/channels', { body: { domain: 'BLOG.example' } }),
      409,
      'duplicate_channel',
    )
    expectInvalid(await h.call('POST', '/emulator/channels', { body: { approved: 'yes' } }), {
      domain: 'required',
      approved: 'invalid_format',
    })
  })

  it('a conversion emitted without programId and channelId references a program and a channel that exist', async () => {
    const h = await start()
    const bodies: { data: { conversion: { programId: number; channelId: number } } }[] = []
    const receiver = await startReceiver((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (chunk: Buffer) => chunks.push(chunk))
      req.on('end', () => {
        bodies.push(JSON.parse(Buffer.concat(chunks).toString()))
        res.end('{}')
      })
    })
    try {
      await h.register(receiver.url, ['conversion.created'])
      ok(await h.call('POST', '/emulator/conversions', { body: { id: 1, status: 'pending' } }))
      await expect.poll(() => bodies.length).toBe(1)
      const { programId, channelId } = bodies[0]?.data.conversion ?? {}
      expect(ok(await h.call('GET', `/v1/programs/${programId}?channelId=${channelId}`)).id).toBe(
        programId,
      )
    } finally {
      await receiver.close()
    }
  })
})

describe('emulator --catalog', () => {
  it('loads programs and channels from a file; a bad file stops the start with a line naming the entry', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'catalog-'))
    try {
      const file = join(dir, 'catalog.json')
      writeFileSync(
        file,
        JSON.stringify({
          programs: [
            {
              id: 500,
              merchantName: 'Only One',
              payoutType: 'cpc',
              networkPayout: '1',
              approvalType: 'auto',
            },
          ],
          channels: [{ id: 3, domain: 'mine.example', approved: true, verified: true }],
        }),
      )
      const h = await start({ catalogPath: file })
      expect(ids(await h.call('GET', '/v1/programs'))).toEqual([500])
      expect(ok(await h.call('GET', '/v1/programs/500')).payout).toBe('0.70')
      ok(await apply(h, 500, 3), 201)
      expectFailure(await apply(h, 500, 7), 404, 'channel_not_found')
      writeFileSync(file, JSON.stringify([{ merchantName: 'Bad type', payoutType: 'cpa' }]))
      await expect(start({ catalogPath: file })).rejects.toThrow(
        /catalogue .*catalog\.json: program 1: payoutType must be one of cps, cpc/,
      )
      writeFileSync(file, '{"programs": ')
      await expect(start({ catalogPath: file })).rejects.toThrow(/catalogue .*catalog\.json: /)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

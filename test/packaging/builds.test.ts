/**
 * The two published builds of the core: `node` (node:crypto) and the portable
 * default (Web Crypto). Same cases, same answers, on the files users get.
 * `npm test` builds first, so these are the current sources.
 */
import { execFile } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import type * as Core from '../../packages/core/src/index.js'
import type * as Testing from '../../packages/core/src/testing/index.js'

const run = promisify(execFile)
const dist = new URL('../../packages/core/dist/', import.meta.url)
const load = async (flavour: 'node' | 'web') => ({
  core: (await import(new URL(`${flavour}/index.js`, dist).href)) as typeof Core,
  testing: (await import(new URL(`${flavour}/testing.js`, dist).href)) as typeof Testing,
})

const SECRET = 'whsec_build_parity'
// After every createdAt the tests stamp (now, or fixed 2026 dates): an event is never signed before it was created.
const NOW = 2_000_000_000
const enc = (text: string) => new TextEncoder().encode(text)

type Case = {
  name: string
  body: string
  header: (signed: string) => string
  timestamp?: number
  /** Bytes sent instead of the signed body. */
  sent?: string
}
const event = JSON.stringify({
  id: 'evt_parity',
  type: 'conversion.created',
  createdAt: '2026-11-20T10:00:00.000Z',
  data: {
    conversion: {
      id: 1,
      programId: 2,
      channelId: 3,
      status: 'pending',
      saleAmount: '10.00',
      commission: '0.70',
      currency: 'EUR',
      occurredAt: null,
    },
    note: 'Ünïcödé ✓',
  },
})
const cases: Case[] = [
  { name: 'valid', body: event, header: (s) => s },
  { name: 'tampered', body: event, sent: event.replace('10.00', '99.00'), header: (s) => s },
  { name: 'several v1', body: event, header: (s) => s.replace(',', `,v1=${'0'.repeat(64)},`) },
  { name: 'malformed', body: event, header: () => 't=abc' },
  // A usable match wins over parts that cannot be used.
  { name: 'part without =', body: event, header: (s) => `${s},potato` },
  {
    name: 'potatoes first',
    body: event,
    header: (s) => s.replace(',', `,${'v1=potato,'.repeat(8)}`),
  },
  {
    name: 'nine v1',
    body: event,
    header: (s) => s.replace(',', `,${`v1=${'0'.repeat(64)},`.repeat(8)}`),
  },
  { name: 'long header', body: event, header: (s) => `${s},x=${'a'.repeat(5000)}` },
  { name: 'repeated header', body: event, header: (s) => `${s}, ${s}` },
  { name: 't twice, different', body: event, header: (s) => `t=${NOW - 5},${s}` },
  { name: 'at the tolerance', body: event, header: (s) => s, timestamp: NOW - 300 },
  { name: 'stale', body: event, header: (s) => s, timestamp: NOW - 1000 },
  { name: 'bad json', body: '{"id":', header: (s) => s },
  { name: 'bad envelope', body: '{"id":"x"}', header: (s) => s },
]

async function answers(flavour: 'node' | 'web') {
  const { core, testing } = await load(flavour)
  const out: Record<string, unknown> = {}
  for (const c of cases) {
    const signed = await testing.signPayload({
      secret: SECRET,
      payload: c.body,
      timestamp: c.timestamp ?? NOW,
    })
    const headers = { 'service-signature': c.header(signed) }
    try {
      const verified = await core.verifyEvent({
        headers,
        rawBody: enc(c.sent ?? c.body),
        secret: SECRET,
        now: () => NOW * 1000,
      })
      out[c.name] = verified.id
    } catch (error) {
      out[c.name] = core.isWebhookError(error) ? error.code : `threw ${String(error)}`
    }
    const receiver = core.createReceiver({
      secret: SECRET,
      now: () => NOW * 1000,
      onConversion: () => {},
    })
    const result = await receiver.receive({ headers, rawBody: enc(c.sent ?? c.body) })
    out[`${c.name} receive`] = [result.status, result.body]
    out[`${c.name} signature`] = signed
  }
  return out
}

describe('built packages', () => {
  it('node and web builds give the same answers on the same cases', async () => {
    const [node, web] = await Promise.all([answers('node'), answers('web')])
    expect(web).toEqual(node)
    expect(node.valid).toBe('evt_parity')
    expect(node.tampered).toBe('signature_mismatch')
    for (const name of [
      'part without =',
      'potatoes first',
      'nine v1',
      'long header',
      'repeated header',
      'at the tolerance',
    ]) {
      expect(node[name], name).toBe('evt_parity')
    }
    expect(node['t twice, different']).toBe('malformed_signature')
    expect(node['bad json receive']).toEqual([400, expect.stringContaining('malformed_json')])
  })

  it('the web build imports nothing from node:, the node build uses node:crypto', () => {
    const text = (flavour: string) =>
      readdirSync(new URL(`${flavour}/`, dist))
        .filter((file) => /\.(c?js)$/.test(file))
        .map((file) => readFileSync(new URL(`${flavour}/${file}`, dist), 'utf8'))
        .join('\n')
    expect(text('web')).not.toMatch(/from ["']node:|require\(["']node:|from ["']crypto["']/)
    expect(text('web')).toContain('crypto.subtle')
    expect(text('node')).toMatch(/node:crypto/)
  })

  it('an error from one copy is recognised by the other (brand, not instanceof)', async () => {
    const node = await load('node')
    const web = await load('web')
    const error = new node.core.WebhookError('signature_mismatch', 'x')
    expect(web.core.isWebhookError(error)).toBe(true)
    expect(error instanceof web.core.WebhookError).toBe(false)
  })
})

describe('CommonJS builds seen from ESM', () => {
  const packages = new URL('../../packages/', import.meta.url)
  // Every CommonJS file a package's exports map offers `require`, with its ESM twin.
  const pairs = readdirSync(packages).flatMap((name) => {
    const manifest = JSON.parse(readFileSync(new URL(`${name}/package.json`, packages), 'utf8'))
    const files = new Set<string>()
    const collect = (value: unknown): void => {
      if (typeof value === 'string') {
        if (value.endsWith('.cjs')) files.add(value)
      } else if (value && typeof value === 'object') Object.values(value).forEach(collect)
    }
    collect(manifest.exports)
    return [...files].map((file): [string, URL, URL] => [
      `${name}: ${file}`,
      new URL(`${name}/${file}`, packages),
      new URL(`${name}/${file.replace(/\.cjs$/, '.js')}`, packages),
    ])
  })

  it('cover every package of the workspace, each with the CommonJS file its main names', () => {
    // The workspace's own list of packages, not the directory the pairs were read from.
    const root = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))
    const workspace = (root.workspaces as string[])
      .filter((entry) => entry.startsWith('packages/'))
      .map((entry) => entry.slice('packages/'.length))
      .sort()
    expect(workspace.length).toBeGreaterThanOrEqual(16)
    const labels = pairs.map(([label]) => label)
    expect([...new Set(labels.map((label) => label.split(':')[0]))].sort()).toEqual(workspace)
    for (const name of workspace) {
      const { main } = JSON.parse(readFileSync(new URL(`${name}/package.json`, packages), 'utf8'))
      expect(main, `${name}: main`).toMatch(/\.cjs$/)
      expect(labels).toContain(`${name}: ${main}`)
    }
  })

  it.each(pairs)(
    '%s shows the same named exports to import() as its ESM build',
    async (_, cjs, esm) => {
      // A plain Node process: vitest's own loader would paper over what Node does.
      const names = async (url: URL) => {
        // Node 23+ also shows a CommonJS module's whole exports object as 'module.exports'.
        const script = `const m = await import(${JSON.stringify(url.href)}); console.log(JSON.stringify(Object.keys(m).filter((n) => n !== 'default' && n !== 'module.exports').sort()))`
        const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script])
        return JSON.parse(stdout) as string[]
      }
      const expected = await names(esm)
      expect(expected.length).toBeGreaterThan(0)
      expect(await names(cjs)).toEqual(expected)
    },
  )
})

/**
 * How far receive() can get with state and without: the built receiver over the
 * same distinct signed events with three stores, against the floor of
 * verify.bench.ts, in one process, interleaved, each round's ratio to the floor
 * of the same round (so a load that changes during the run cancels out).
 *
 *   npm run build && node --expose-gc --import tsx bench/receive-bounds.ts
 *
 * - memoryStore: the store as shipped (expiry, bounds, leases, locks, waiters).
 * - plain Maps: the least a correct store keeps, a Map each for done ids,
 *   leases, watermarks and locks, nothing bounded or expired.
 * - no state: a store that claims every event and commits at once, so what is
 *   left is the pipeline (verification, the spec's checks, dispatch, the answer).
 */
import { createHmac, createSecretKey, timingSafeEqual } from 'node:crypto'
import type * as Core from '@affiliate-webhooks/core'
import type * as Testing from '@affiliate-webhooks/core/testing'

const dist = (path: string): string =>
  new URL(`../packages/core/dist/${path}`, import.meta.url).href
const core = (await import(dist('node/index.js'))) as typeof Core
const testing = (await import(dist('node/testing.js'))) as typeof Testing

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
const POOL = 40_000
const OPS = 30_000
const ROUNDS = Number(process.env.ROUNDS ?? 15)

interface Input {
  headers: Record<string, string>
  rawBody: Buffer
  prefix: string
  v1: string
}
const pool: Input[] = []
const createdAt = Date.now()
for (let i = 0; i < POOL; i++) {
  const event = testing.buildConversionEvent({
    id: `evt_${(0x5a17c0de0000 + i).toString(16).padStart(24, '0')}`,
    createdAt,
    conversion: { id: 48_210_000 + i, programId: 1042, channelId: 7781 },
  })
  const { headers, body } = await testing.signedDelivery({ secret: SECRET, event })
  const flat = Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name, Buffer.from(value).toString('latin1')]),
  )
  const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(flat['service-signature'] ?? '') ?? []
  pool.push({ headers: flat, rawBody: Buffer.from(body), prefix: `${t}.`, v1: v1 as string })
}

/** The least a correct store keeps: four Maps, nothing expired or bounded. */
function plainMaps(): Core.EventStore {
  const done = new Set<string>()
  const leases = new Map<string, string>()
  const watermarks = new Map<number, number>()
  const locks = new Map<number, string>()
  let tokens = 0
  return {
    begin({ eventId, conversionId, order }) {
      if (done.has(eventId)) return { status: 'duplicate' }
      if (leases.has(eventId)) return { status: 'in_progress' }
      if (conversionId !== undefined) {
        if ((watermarks.get(conversionId) ?? Number.NEGATIVE_INFINITY) >= order) {
          done.add(eventId)
          return { status: 'stale' }
        }
        if (locks.has(conversionId)) return { status: 'in_progress' }
      }
      const token = String(++tokens)
      leases.set(eventId, token)
      if (conversionId !== undefined) locks.set(conversionId, token)
      return { status: 'claimed', claim: { eventId, conversionId, order, token } }
    },
    commit({ eventId, conversionId, order }) {
      leases.delete(eventId)
      done.add(eventId)
      if (conversionId !== undefined) {
        if ((watermarks.get(conversionId) ?? Number.NEGATIVE_INFINITY) < order) {
          watermarks.set(conversionId, order)
        }
        locks.delete(conversionId)
      }
      return true
    },
    release() {},
  }
}

/** Claims every event and commits at once: no state at all. */
const noState = (): Core.EventStore => ({
  begin: ({ eventId, order }) => ({ status: 'claimed', claim: { eventId, order, token: '1' } }),
  commit: () => true,
  release() {},
})

const key = createSecretKey(Buffer.from(SECRET, 'utf8'))
let sink = 0
const cases: Record<string, (n: number) => unknown> = {
  floor(n) {
    for (let i = 0; i < n; i++) {
      const f = pool[i] as Input
      const actual = createHmac('sha256', key).update(f.prefix).update(f.rawBody).digest()
      if (!timingSafeEqual(actual, Buffer.from(f.v1, 'hex'))) throw new Error('floor: no match')
      sink += (JSON.parse(f.rawBody.toString('utf8')) as { id: string }).id.length
    }
  },
}
for (const [name, store] of [
  ['memoryStore', core.memoryStore],
  ['plain Maps', plainMaps],
  ['no state', noState],
] as const) {
  cases[name] = async (n) => {
    const receiver = core.createReceiver({ secret: SECRET, onConversion: () => {}, store: store() })
    for (let i = 0; i < n; i++) {
      const { rawBody, headers } = pool[i] as Input
      const answer = await receiver.receive({ rawBody, headers })
      if (answer.outcome !== 'processed') throw new Error(`${name}: ${answer.outcome}`)
    }
  }
}

const names = Object.keys(cases)
const perSecond: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]))
for (const name of names) await cases[name]?.(OPS)
for (let round = 0; round < ROUNDS; round++) {
  for (let k = 0; k < names.length; k++) {
    const name = names[(round + k) % names.length] as string
    globalThis.gc?.()
    const start = process.hrtime.bigint()
    await cases[name]?.(OPS)
    const seconds = Number(process.hrtime.bigint() - start) / 1e9
    perSecond[name]?.push(OPS / seconds)
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] as number
const floor = perSecond.floor as number[]
const lines = [
  `receive() bounds, ${ROUNDS} rounds of ${OPS} distinct events, Node ${process.version}`,
]
lines.push('', '| case | ratio to floor (median of rounds) |', '|---|---:|')
for (const name of names.slice(1)) {
  const ratios = (perSecond[name] as number[]).map((value, i) => value / (floor[i] as number))
  lines.push(`| receive() + ${name} | ${median(ratios).toFixed(2)} |`)
}
if (sink === -1) lines.push('')
process.stdout.write(`${lines.join('\n')}\n`)

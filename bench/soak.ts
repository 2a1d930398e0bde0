/**
 * 200,000 bad requests against the node adapter on loopback (bad signatures over
 * keep-alive connections, one in 50 a lying Content-Length, one in 50 a
 * mid-body disconnect), then the heap against its baseline after a warm-up,
 * both after full collections; and how many log lines the whole soak wrote.
 * test/adapters/soak.test.ts runs a tenth of it.
 *
 *   flock /tmp/heavy.lock node --import tsx bench/soak.ts
 */
import { adapters } from '../test/support/conformance-adapters.js'
import { settledHeap, soak } from '../test/support/soak.js'

const TOTAL = Number(process.env.TOTAL ?? 200_000)
const MiB = 1024 * 1024
const node = adapters.find((adapter) => adapter.name === 'node')
if (node === undefined) throw new Error('no node adapter')
let lines = 0
const app = await node.start({
  secret: 'whsec_soak_receiver',
  onConversion: () => {},
  bodyTimeoutMs: 50,
  logger: { warn: () => void lines++, error: () => void lines++ },
})
await soak(app.url, 5_000)
const baseline = await settledHeap()
const { statuses, ms } = await soak(app.url, TOTAL)
const after = await settledHeap()
await app.close()
console.log(
  JSON.stringify(
    {
      requests: TOTAL,
      seconds: Math.round(ms / 100) / 10,
      perSecond: Math.round(TOTAL / (ms / 1000)),
      answers: Object.fromEntries(statuses),
      heapBaselineMiB: +(baseline / MiB).toFixed(2),
      heapAfterMiB: +(after / MiB).toFixed(2),
      heapGrowthMiB: +((after - baseline) / MiB).toFixed(2),
      heapRatio: +(after / baseline).toFixed(3),
      logLines: lines,
    },
    null,
    2,
  ),
)

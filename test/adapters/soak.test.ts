/**
 * A smaller run of bench/soak.ts: bad requests (signatures, lying lengths,
 * disconnects) against the node adapter, after which the heap is back at its
 * baseline, and the log holds a few lines, not one per request.
 */

import { expect, it } from 'vitest'
import { adapters } from '../support/conformance-adapters.js'
import { settledHeap, soak } from '../support/soak.js'

const MiB = 1024 * 1024

it('20,000 bad requests leave the heap at its baseline (within 4 MiB) and the log at a few lines', async () => {
  const node = adapters.find((adapter) => adapter.name === 'node')
  if (node === undefined) throw new Error('no node adapter')
  const lines: string[] = []
  const app = await node.start({
    secret: 'whsec_soak_receiver',
    onConversion: () => {},
    bodyTimeoutMs: 50,
    logger: { warn: (line: string) => lines.push(line), error: (line: string) => lines.push(line) },
  })
  try {
    await soak(app.url, 2_000)
    const baseline = await settledHeap()
    const { statuses } = await soak(app.url, 20_000)
    const after = await settledHeap()
    expect(Object.fromEntries(statuses)).toEqual({ '401': 19_200, '408': 400, disconnect: 400 })
    expect(after - baseline).toBeLessThan(4 * MiB)
    // The first refusal, then counts; plus the failure streak's three warnings.
    expect(lines.length).toBeLessThanOrEqual(4)
  } finally {
    await app.close()
  }
}, 120_000)

/**
 * A soak of bad requests against one adapter on loopback: bad signatures over
 * keep-alive connections, with lying lengths and mid-body disconnects mixed in,
 * a bounded number in flight. Measures the heap after a warm-up and after the
 * soak, each after a full garbage collection, so a leak per refused request
 * shows as growth. Used by bench/soak.ts (200,000 requests) and by
 * test/adapters/soak.test.ts (a smaller run).
 */
import { Agent, request } from 'node:http'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import { rawRequest } from './hostile-cases.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

/** The heap in use after full collections, bytes. */
export async function settledHeap(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    gc()
    await new Promise((resolve) => setImmediate(resolve))
  }
  return process.memoryUsage().heapUsed
}

export interface SoakResult {
  sent: number
  statuses: Map<string, number>
  ms: number
}

/** One in `every` requests is a lying length, one in `every` (offset) a disconnect. */
const EVERY = 50

/** Sends `total` bad requests, at most `concurrency` at once. */
export async function soak(url: string, total: number, concurrency = 32): Promise<SoakResult> {
  const delivery = await signedDelivery({
    secret: 'whsec_not_the_receivers_secret',
    event: buildConversionEvent(),
  })
  const body = Buffer.from(delivery.body)
  const headers = { ...delivery.headers, 'content-length': String(body.byteLength) }
  const { hostname, port, pathname, host } = new URL(url)
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency })
  const statuses = new Map<string, number>()
  const count = (key: string) => statuses.set(key, (statuses.get(key) ?? 0) + 1)
  const badSignature = () =>
    new Promise<void>((resolve) => {
      const req = request(
        { hostname, port, path: pathname, method: 'POST', headers, agent },
        (res) => {
          count(String(res.statusCode))
          res.resume()
          res.on('end', resolve)
        },
      )
      req.on('error', () => {
        count('error')
        resolve()
      })
      req.end(body)
    })
  const head = (length: number) =>
    `POST ${pathname} HTTP/1.1\r\nhost: ${host}\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\n\r\n`
  const lyingLength = () =>
    rawRequest(url, head(300), [{ write: body.subarray(0, 20) }], 5_000).then((got) =>
      count(String(got.status)),
    )
  const disconnect = () =>
    rawRequest(url, head(300), [{ write: body.subarray(0, 20) }, { close: true }], 5_000).then(() =>
      count('disconnect'),
    )

  const started = performance.now()
  let next = 0
  const worker = async () => {
    for (let n = next++; n < total; n = next++) {
      if (n % EVERY === 0) await lyingLength()
      else if (n % EVERY === 1) await disconnect()
      else await badSignature()
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  agent.destroy()
  return { sent: total, statuses, ms: performance.now() - started }
}
